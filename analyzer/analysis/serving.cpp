// Serving steps: the annotation grammars of tracegate/analyzer/serving.h, and the serving section
// (steps by kind and token bucket, graph replays' share of kernel time).
#include "tracegate/analyzer/serving.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include "analyzer/analysis/correlation.h"
#include "tracegate/analyzer/iterations.h"
#include "tracegate/analyzer/stats.h"

namespace tg {

using internal::ApiIndex;

namespace {

// A left-to-right reader over one name.
struct Cursor {
  std::string_view s;
  size_t i = 0;

  bool Done() const { return i == s.size(); }
  bool Peek(char c) const { return i < s.size() && s[i] == c; }
  bool Lit(std::string_view lit) {
    if (s.substr(i, lit.size()) != lit) return false;
    i += lit.size();
    return true;
  }
  // A run of 1..18 decimal digits (no sign): never overflows int64.
  bool Num(int64_t* v) {
    size_t j = i;
    int64_t n = 0;
    while (j < s.size() && s[j] >= '0' && s[j] <= '9' && j - i < 18) n = n * 10 + (s[j++] - '0');
    if (j == i || (j < s.size() && s[j] >= '0' && s[j] <= '9')) return false;  // none, or too long
    i = j;
    *v = n;
    return true;
  }
};

// "(sq<a>sk<b>sqsq<c>sqsk<d>)" after the request count: the sums of query and KV lengths. Any other
// parenthesised text is skipped with the sums unknown; false only for an unclosed parenthesis.
bool VllmSums(Cursor& c, int64_t* query, int64_t* context) {
  if (!c.Peek('(')) return true;  // the sums are optional
  Cursor strict = c;
  int64_t a = 0, b = 0, sq2 = 0, sqk = 0;
  if (strict.Lit("(sq") && strict.Num(&a) && strict.Lit("sk") && strict.Num(&b) && strict.Lit("sqsq") &&
      strict.Num(&sq2) && strict.Lit("sqsk") && strict.Num(&sqk) && strict.Lit(")")) {
    *query = a, *context = b;
    c = strict;
    return true;
  }
  const size_t close = c.s.find(')', c.i);
  if (close == std::string_view::npos) return false;
  c.i = close + 1;
  return true;
}

StepKind KindOf(int64_t prefill, int64_t decode) {
  if (prefill < 0 || decode < 0) return StepKind::kUnknown;
  if (prefill > 0 && decode > 0) return StepKind::kMixed;
  if (prefill > 0) return StepKind::kPrefill;
  return decode > 0 ? StepKind::kDecode : StepKind::kUnknown;
}

}  // namespace

bool ParseVllmStep(std::string_view name, ServingStep* out) {
  Cursor c{name};
  ServingStep s;
  if (!c.Lit("execute_") || !c.Num(&s.tokens) || !c.Lit("_context_") || !c.Num(&s.prefill_requests) ||
      !VllmSums(c, &s.prefill_query_tokens, &s.prefill_context_tokens) || !c.Lit("_generation_") ||
      !c.Num(&s.decode_requests) || !VllmSums(c, &s.decode_query_tokens, &s.decode_context_tokens) || !c.Done())
    return false;
  s.forms = kStepFormVllm;
  s.kind = KindOf(s.prefill_requests, s.decode_requests);
  *out = s;
  return true;
}

bool ParseSglangStep(std::string_view name, ServingStep* out) {
  Cursor c{name};
  if (!c.Lit("step[") || name.empty() || name.back() != ']') return false;
  const std::string_view body = name.substr(5, name.size() - 6);
  const size_t space = body.find(' ');
  const std::string_view mode = body.substr(0, space);
  if (mode.empty() || !std::all_of(mode.begin(), mode.end(), [](char ch) {
        return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || ch == '_';
      }))
    return false;
  ServingStep s;
  s.forms = kStepFormSglang;
  int64_t bs = -1;
  // key=value pairs separated by spaces; bs and toks read, others ignored; a bad value: not a step.
  for (size_t at = space; at != std::string_view::npos && at < body.size();) {
    size_t next = body.find(' ', at + 1);
    const std::string_view pair = body.substr(at + 1, next == std::string_view::npos ? next : next - at - 1);
    at = next;
    if (pair.empty()) continue;
    const size_t eq = pair.find('=');
    if (eq == std::string_view::npos) return false;
    const std::string_view key = pair.substr(0, eq);
    int64_t* target = key == "bs" ? &bs : key == "toks" ? &s.tokens : nullptr;
    if (target == nullptr) continue;
    Cursor v{pair.substr(eq + 1)};
    if (!v.Num(target) || !v.Done()) return false;
  }
  if (mode == "EXTEND" || mode == "PREFILL") {
    s.kind = StepKind::kPrefill;
    s.prefill_requests = bs;
    if (bs >= 0) s.decode_requests = 0;  // an extend batch holds no decode requests
  } else if (mode == "DECODE") {
    s.kind = StepKind::kDecode;
    s.decode_requests = bs;
    if (bs >= 0) s.prefill_requests = 0;
  } else if (mode == "MIXED") {
    s.kind = StepKind::kMixed;  // bs counts both parts: the split is unknown
  }
  *out = s;
  return true;
}

bool ParseTrtllmStep(std::string_view name, ServingStep* out) {
  Cursor c{name};
  c.Lit("[Executor] ");  // the PyTorch backend's prefix, when there is one
  int64_t iteration = 0;
  if (c.Lit("_forward_step ")) {
    if (!c.Num(&iteration) || !c.Lit(": ")) return false;
  } else if (!c.Lit("executeStep: ")) {
    return false;
  }
  ServingStep s;
  if (!c.Num(&s.prefill_requests) || !c.Lit(" ctx reqs, ") || !c.Num(&s.decode_requests) || !c.Lit(" gen reqs") ||
      !c.Done())
    return false;
  s.forms = kStepFormTrtllm;
  s.kind = KindOf(s.prefill_requests, s.decode_requests);
  *out = s;
  return true;
}

bool ParseServingStep(std::string_view name, ServingStep* out) {
  return ParseVllmStep(name, out) || ParseSglangStep(name, out) || ParseTrtllmStep(name, out);
}

bool ParseCaptureStep(std::string_view name, int64_t* size, std::string* mode) {
  Cursor c{name};
  int64_t n = 0;
  if (!c.Lit("capture_") || !c.Num(&n) || !c.Lit("_") || c.Done()) return false;
  const std::string_view m = name.substr(c.i);
  if (!std::all_of(m.begin(), m.end(), [](char ch) { return (ch >= 'A' && ch <= 'Z') || ch == '_'; })) return false;
  *size = n;
  *mode = std::string(m);
  return true;
}

void MergeServingStep(ServingStep& into, const ServingStep& from) {
  into.forms |= from.forms;
  for (auto field : {&ServingStep::tokens, &ServingStep::prefill_requests, &ServingStep::decode_requests,
                     &ServingStep::prefill_query_tokens, &ServingStep::prefill_context_tokens,
                     &ServingStep::decode_query_tokens, &ServingStep::decode_context_tokens})
    if (into.*field < 0) into.*field = from.*field;
  if (into.kind == StepKind::kUnknown) into.kind = from.kind;
  if (into.prefill_requests >= 0 && into.decode_requests >= 0) {
    const StepKind k = KindOf(into.prefill_requests, into.decode_requests);
    if (k != StepKind::kUnknown) into.kind = k;
  }
}

std::string StepFormName(uint8_t forms) {
  std::string out;
  for (auto [bit, name] : {std::pair{kStepFormVllm, "vllm"}, {kStepFormSglang, "sglang"}, {kStepFormTrtllm, "trtllm"}})
    if (forms & bit) out += (out.empty() ? "" : "+") + std::string(name);
  return out;
}

int64_t TokenBucketMin(int64_t tokens) {
  if (tokens < 0) return -1;
  if (tokens == 0) return 0;
  int64_t b = 1;
  while (b <= tokens / 2) b *= 2;
  return b;
}

ServingAnalysis AnalyzeServing(const Trace& trace, const IterationAnalysis& iterations, const ApiIndex& api) {
  ServingAnalysis out;
  // Steps by (kind, bucket): the kind in report order, unknown last; unknown tokens last.
  auto kind_order = [](StepKind k) { return k == StepKind::kUnknown ? 9 : static_cast<int>(k); };
  struct Acc {
    std::vector<double> latency_ms;
    TimeNs latency_ns = 0;
    int64_t tokens = 0;
    bool tokens_known = true;
  };
  std::map<std::tuple<int, int64_t>, Acc> groups;
  uint8_t forms = 0;
  for (const Iteration& it : iterations.iterations) {
    const ServingStep& s = it.serving;
    if (!s.is_step()) continue;
    ++out.steps;
    forms |= s.forms;
    const int64_t bucket = TokenBucketMin(s.tokens);
    Acc& a = groups[{kind_order(s.kind), bucket < 0 ? INT64_MAX : bucket}];
    a.latency_ms.push_back(NsToMs(it.latency_ns()));
    a.latency_ns += it.latency_ns();
    if (s.tokens >= 0) a.tokens += s.tokens;
    else a.tokens_known = false;
  }
  out.step_form = StepFormName(forms);
  for (auto& [key, a] : groups) {
    ServingGroup g;
    const int k = std::get<0>(key);
    g.kind = k == 9 ? StepKind::kUnknown : static_cast<StepKind>(k);
    g.bucket_min = std::get<1>(key) == INT64_MAX ? -1 : std::get<1>(key);
    g.count = a.latency_ms.size();
    g.latency_ns = a.latency_ns;
    g.tokens = a.tokens_known ? a.tokens : -1;
    const SampleStats st = Describe(std::move(a.latency_ms));
    g.p50_ms = st.p50, g.p95_ms = st.p95, g.p99_ms = st.p99, g.mean_ms = st.mean;
    out.groups.push_back(g);
  }

  // Capture annotations: a verdict per distinct name.
  const RangeTable& r = trace.ranges;
  std::vector<int8_t> capture(trace.strings.size(), -1);
  for (size_t i = 0; i < r.size(); ++i) {
    if (r.on_gpu[i]) continue;
    int8_t& v = capture[r.name[i]];
    if (v < 0) {
      int64_t size = 0;
      std::string mode;
      v = ParseCaptureStep(trace.Name(r.name[i]), &size, &mode) ? 1 : 0;
      if (v == 1 && out.capture_names.size() < 16) out.capture_names.emplace_back(trace.Name(r.name[i]));
    }
    out.capture_steps += v == 1;
  }

  // Graph replays: a verdict per distinct call name, each launch counted once.
  const ApiTable& calls = trace.api_calls;
  std::vector<int8_t> graph(trace.strings.size(), -1);
  std::vector<uint8_t> counted;
  const KernelTable& k = trace.kernels;
  for (size_t i = 0; i < k.size(); ++i) {
    const TimeNs d = std::max<TimeNs>(0, k.end[i] - k.start[i]);
    out.kernel_ns += d;
    const int64_t call = api.Find(k.correlation[i], k.pid[i]);
    if (call < 0) continue;
    const auto row = static_cast<size_t>(call);
    int8_t& v = graph[calls.name[row]];
    if (v < 0) v = ApiRoleOf(trace.Name(calls.name[row])) == ApiRole::kGraphLaunch ? 1 : 0;
    if (v == 0) continue;
    ++out.graph_kernels;
    out.graph_kernel_ns += d;
    if (counted.empty()) counted.assign(calls.size(), 0);
    if (!counted[row]) counted[row] = 1, ++out.graph_launches;
  }
  out.has_graph_ratio = out.kernel_ns > 0;
  if (out.has_graph_ratio)
    out.graph_kernel_ratio = static_cast<double>(out.graph_kernel_ns) / static_cast<double>(out.kernel_ns);
  return out;
}

}  // namespace tg
