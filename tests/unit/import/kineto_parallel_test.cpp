// Issue 7: the in-place fast path reads events exactly as the simdjson path does, and a
// two-thread import gives the same trace (or the same error) as a sequential one.
#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "analyzer/import/kineto/gz_reader.h"
#include "analyzer/import/kineto/kineto_event.h"
#include "analyzer/import/kineto/kineto_fast.h"
#include "analyzer/import/kineto/kineto_numbers.h"
#include "temp_file.h"
#include "tracegate/analyzer/import.h"
#include "tracegate/reports/chrome_export.h"

namespace tg {
namespace {

namespace fs = std::filesystem;
using internal::Dim3;
using internal::Field;
using internal::RawEvent;

// ---- fast path against EventParser ----

std::string Describe(const Field& f) { return std::to_string(static_cast<int>(f.type)) + ":" + std::string(f.text); }
std::string Describe(const Dim3& d) {
  return std::to_string(static_cast<int>(d.type)) + ":" + std::to_string(d.v[0]) + "," + std::to_string(d.v[1]) + "," +
         std::to_string(d.v[2]);
}
// Every field of a RawEvent as one string, so two events compare in one EXPECT.
std::string Describe(const RawEvent& e) {
  std::string s =
      std::to_string(e.is_object) + std::to_string(static_cast<int>(e.args)) + std::to_string(e.args_is_object);
  for (const Field* f :
       {&e.ph, &e.cat, &e.name, &e.pid, &e.tid, &e.ts, &e.dur, &e.id, &e.device, &e.stream, &e.correlation, &e.bytes,
        &e.registers, &e.shared_memory, &e.sync_kind, &e.wait_event_id, &e.in_device, &e.arg_name, &e.arg_pid}) {
    s += "|" + Describe(*f);
  }
  return s + "|" + Describe(e.grid) + "|" + Describe(e.block);
}

// Nesting of containers in text without escapes (the fast path declines escapes).
int Nesting(const std::string& t) {
  int depth = 0, max = 0;
  bool in_string = false;
  for (char c : t) {
    if (c == '"') in_string = !in_string;
    if (in_string) continue;
    if (c == '{' || c == '[') max = std::max(max, ++depth);
    if (c == '}' || c == ']') --depth;
  }
  return max;
}

// When the fast path takes `text` (followed by more data), EventParser must accept the same
// bytes and read the same fields. `memo` carries what the fast path learned from earlier events,
// so a test can check the learned steps on text that differs from what they were learned on.
void ExpectAgrees(const std::string& text, int max_levels, int* taken, internal::FastParseMemo& memo) {
  std::string buf = text + " , {\"next\": 1}" + std::string(64, ' ');
  const char* end = buf.data() + text.size() + 14;
  RawEvent fast;
  size_t n = internal::FastParseEvent(buf.data(), end, max_levels, fast, memo);
  if (n == 0) return;
  ++*taken;
  std::string value = buf.substr(0, n);
  EXPECT_LE(Nesting(value), max_levels) << value;
  std::string padded = value + std::string(64, ' ');
  internal::EventParser parser(512);
  RawEvent slow;
  Status s = parser.Parse(std::string_view(padded.data(), value.size()), 0, slow);
  ASSERT_TRUE(s.ok()) << "fast path took invalid JSON: " << value << " (" << s.message() << ")";
  EXPECT_EQ(Describe(fast), Describe(slow)) << value;
}

const char* const kEvents[] = {
    R"J({"ph": "X", "cat": "kernel", "name": "void at::native::k<float>(int)", "pid": 0, "tid": 7, "ts": 1695835572943613.123, "dur": 2.5, "args": {"External id": 12, "device": 0, "stream": 7, "correlation": 41, "registers per thread": 32, "shared memory": 4096, "grid": [108, 1, 1], "block": [256, 1, 1], "est. achieved occupancy %": 50}})J",
    R"J({"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD (Pinned -> Device)","pid":0,"tid":"stream 7","ts":5,"dur":1e3,"args":{"bytes":4096,"inDevice":1,"correlation":-1,"x":[true,false,null,{"a":[]}]}})J",
    R"({"ph": "M", "name": "process_name", "pid": 4242, "args": {"name": "python3", "pid": 17}})",
    R"({"ph": "s", "id": 41, "pid": 1, "tid": 2, "ts": 0.001, "cat": "ac2g", "name": "ac2g"})",
    R"({"ph": "X", "cat": "cuda_sync", "ts": 1, "dur": 0, "args": {"cuda_sync_kind": "Event Sync", "wait_on_cuda_event_id": 3, "grid": null, "block": [1, 2]}})",
    R"({"ph": "X", "args": null, "args": {"grid": [1, 2, 3, 4]}, "ts": -0.0, "dur": 0E+0, "name": ""})",
    R"({"ph": "X", "args": [1, {"b": {}}], "tid": 1.5, "pid": true, "cat": {"nested": [[]]}})",
    R"({ "ph" : "X" , "ts" : 10 , "args" : { "grid" : [ 1 , 2 , 3 ] , "stream" : "7" } , "dur" : 3 })",
    "{\n  \"ph\": \"X\",\n\t\"ts\": 1,\r\n  \"dur\": 2,\n  \"args\": {\n    \"device\": 0\n  }\n}",
    R"({"ph": "X", "name": "esc\"aped", "ts": 1, "dur": 1})",
    R"({"ph": "X", "name": "caf\u00e9", "ts": 1, "dur": 1})",
    "{\"ph\": \"X\", \"name\": \"caf\xC3\xA9\", \"ts\": 1, \"dur\": 1}",
    R"({})",
    R"([1, 2])",
    R"({"grid": [2147483648, -2147483649, 1.0]})",
    // Members nobody reads, as a profile with stacks has them: integers skipped without being read.
    R"({"ph": "X", "Ev Idx": 0, "args": {"Python parent id": 394599, "Python id": -7, "Ev Idx": 1234567890123456, "x": 12345678901234567}})",
};

TEST(KinetoFastPath, ReadsEveryFieldAsTheSimdjsonPathDoes) {
  // Each event read three times: learning its member literals, then with them, then after all
  // the others have been learned too.
  internal::FastParseMemo shared;
  for (int pass = 0; pass < 3; ++pass) {
    int taken = 0;
    for (const char* e : kEvents) {
      internal::FastParseMemo own;
      ExpectAgrees(e, 510, &taken, own);
      ExpectAgrees(e, 510, &taken, own);
      ExpectAgrees(e, 510, &taken, shared);
    }
    // All but the escaped, \u, non-ASCII and non-object ones.
    EXPECT_EQ(taken, 36) << pass;
  }
}

TEST(KinetoFastPath, NeverTakesWhatTheSimdjsonPathRejectsOrReadsDifferently) {
  // Every one-byte deletion and every replacement by a JSON-significant byte of every event: the
  // fast path may decline any of them, but what it takes must be valid and read the same. The
  // memo has learned the unchanged event first, so the changed bytes meet learned literals.
  const std::string bytes = "{}[],:\"\\ 0123456789.-+eEtfnulx\x01\x80";
  int taken = 0;
  for (const char* e : kEvents) {
    const std::string base = e;
    internal::FastParseMemo memo;
    ExpectAgrees(base, 510, &taken, memo);
    for (size_t i = 0; i < base.size(); ++i) {
      ExpectAgrees(base.substr(0, i) + base.substr(i + 1), 510, &taken, memo);
      for (char c : bytes) {
        std::string v = base;
        v[i] = c;
        ExpectAgrees(v, 510, &taken, memo);
        ExpectAgrees(base, 510, &taken, memo);  // and the original still reads the same after it
      }
    }
  }
  EXPECT_GT(taken, 1000);  // it does take most harmless variants
}

// A step that is not learned (a name too long for a literal) leaves nothing to predict from:
// the first-step literals ("{"...) learned before must not be tried after the next value, where
// "{" is no separator (found by a differential fuzzer in review).
TEST(KinetoFastPath, AStepNotLearnedPredictsNothing) {
  const std::string long_key = "a_key_name_longer_than_thirty_two_bytes";
  for (const std::string& bad :
       {"{\"" + long_key + "\": \"v\"{\"ph\": \"X\"}", "{\"" + long_key + "\": [1]{\"ph\": \"X\"}",
        "{\"args\": {\"" + long_key + "\": \"v\"{\"device\": 1}}"}) {
    internal::FastParseMemo memo;
    int taken = 0;
    ExpectAgrees(R"({"ph": "X", "args": {"device": 1}})", 510, &taken, memo);
    ExpectAgrees(R"({"args": {"device": 1}})", 510, &taken, memo);
    EXPECT_EQ(taken, 2);
    std::string buf = bad + std::string(64, ' ');
    RawEvent out;
    EXPECT_EQ(internal::FastParseEvent(buf.data(), buf.data() + bad.size(), 510, out, memo), 0u) << bad;
    ExpectAgrees(bad, 510, &taken, memo);  // declined, or (never) taken and then checked
    EXPECT_EQ(taken, 2) << bad;
  }
}

// Random events against simdjson with one memo throughout (reset now and then): member names
// known and unknown, short and over 32 bytes, values of every kind, random white space, then
// one byte deleted or replaced in a third of them.
TEST(KinetoFastPath, RandomEventsWithALearningMemoReadAsSimdjsonDoes) {
  std::mt19937_64 rng(23);
  auto pick = [&](std::initializer_list<const char*> v) { return std::string(v.begin()[rng() % v.size()]); };
  auto ws = [&] { return rng() % 8 ? std::string(rng() % 3 == 0 ? " " : "") : pick({" ", "  ", "\n", "\t", "\r\n "}); };
  std::function<std::string(int)> value = [&](int depth) -> std::string {
    switch (rng() % (depth > 2 ? 6 : 8)) {
      case 0:
        return std::to_string(static_cast<int64_t>(rng() % 100000)) +
               (rng() % 2 ? "" : "." + std::to_string(rng() % 1000));
      case 1: return pick({"0", "-0", "7", "-12", "1e3", "2.5E-1", "123456789012345678", "1695835572943613.123"});
      case 2: return "\"" + pick({"X", "kernel", "cuda_runtime", "ac2g", "", "stream 7"}) + "\"";
      case 3: return pick({"true", "false", "null"});
      case 4:
        return "[" + ws() + std::to_string(rng() % 300) + ws() + "," + ws() + "1" + ws() + "," + ws() + "1" + ws() +
               "]";
      case 5: return "[]";
      case 6: return "[" + value(depth + 1) + "," + ws() + value(depth + 1) + "]";
      default: {
        std::string o = "{";
        const int n = static_cast<int>(rng() % 3);
        for (int i = 0; i < n; ++i)
          o += (i ? "," : "") + ws() + "\"k" + std::to_string(i) + "\":" + ws() + value(depth + 1);
        return o + ws() + "}";
      }
    }
  };
  const std::string long_name = "a_member_name_that_is_longer_than_thirty_two_bytes";
  auto member = [&](bool in_args) {
    std::string key = rng() % 10 == 0 ? long_name
                      : in_args ? pick({"device", "stream", "correlation", "grid", "block", "bytes", "External id",
                                        "registers per thread", "shared memory", "name", "pid", "queued"})
                                : pick({"ph", "cat", "name", "pid", "tid", "ts", "dur", "id", "bp", "s"});
    return "\"" + key + "\"" + ws() + ":" + ws() + value(in_args ? 2 : 1);
  };
  auto object = [&](bool in_args, auto& self) -> std::string {
    std::string o = "{" + ws();
    const int n = static_cast<int>(rng() % (in_args ? 5 : 8));
    for (int i = 0; i < n; ++i) {
      if (i) o += ws() + "," + ws();
      o += !in_args && rng() % 5 == 0 ? "\"args\"" + ws() + ":" + ws() + self(true, self) : member(in_args);
    }
    return o + ws() + "}";
  };
  internal::FastParseMemo memo;
  int taken = 0;
  for (int i = 0; i < 30000; ++i) {
    if (i % 3000 == 0) memo = internal::FastParseMemo();
    std::string ev = object(false, object);
    if (i % 3 == 0 && !ev.empty()) {
      size_t at = rng() % ev.size();
      // Half the time at a separator (the first one, or any): where learned literals are tried.
      if (rng() % 2) {
        const size_t comma = ev.find(',', rng() % 2 ? 0 : at);
        if (comma != std::string::npos && rng() % 2) {
          ev[comma] = '{';  // a value followed by what starts an object, not by a separator
          at = ev.size();
        } else if (comma != std::string::npos) {
          at = comma;
        }
      }
      if (at < ev.size()) switch (rng() % 3) {
          case 0: ev.erase(at, 1); break;
          case 1: ev[at] = "{}[],:\" 0.-eE\\x"[rng() % 16]; break;
          default: ev.insert(at, 1, "{}[],:\" 0.-eE\\x"[rng() % 16]); break;
        }
    }
    ExpectAgrees(ev, static_cast<int>(1 + rng() % 5), &taken, memo);
    if (::testing::Test::HasFailure()) break;
  }
  EXPECT_GT(taken, 5000);
}

// The memo is bounded: a trace whose members never repeat fills it, and from then on every
// member takes the step-by-step path, still reading the same.
TEST(KinetoFastPath, MemoFullOfOneOffNamesStillReadsTheSame) {
  internal::FastParseMemo memo;
  int taken = 0;
  for (int i = 0; i < 400; ++i) {
    const std::string k = "k" + std::to_string(i);
    ExpectAgrees("{\"ph\": \"X\", \"" + k + "\": " + std::to_string(i) + ", \"ts\": 1, \"args\": {\"" + k +
                     "\": [1], \"stream\": 7}, \"dur\": 2}",
                 510, &taken, memo);
  }
  EXPECT_EQ(taken, 400);
  // With the memo full, first steps it does not know are not learned either: the same texts
  // with "{" right after a value must still be declined.
  for (int i = 0; i < 50; ++i) {
    const std::string k = "q" + std::to_string(i);
    const std::string bad = "{ \"" + k + "\" : \"\" ,\"x\" : \"\"{ }";
    std::string buf = bad + std::string(64, ' ');
    RawEvent out;
    EXPECT_EQ(internal::FastParseEvent(buf.data(), buf.data() + bad.size(), 510, out, memo), 0u) << bad;
  }
}

TEST(KinetoFastPath, DeclinesWhatIsNestedBeyondTheLimitAndEventsCutByTheBuffer) {
  const std::string ev = R"({"ph": "X", "args": {"grid": [1, 2, 3], "x": [[1]]}})";  // 4 levels
  RawEvent out;
  std::string buf = ev + std::string(64, ' ');
  internal::FastParseMemo memo;  // learns the event at the first level limit, then uses it
  for (int levels = 0; levels < 4; ++levels) {
    EXPECT_EQ(internal::FastParseEvent(buf.data(), buf.data() + ev.size(), levels, out, memo), 0u) << levels;
  }
  EXPECT_EQ(internal::FastParseEvent(buf.data(), buf.data() + ev.size(), 4, out, memo), ev.size());
  for (int levels = 0; levels < 4; ++levels) {
    EXPECT_EQ(internal::FastParseEvent(buf.data(), buf.data() + ev.size(), levels, out, memo), 0u) << levels;
  }
  for (size_t cut = 0; cut < ev.size(); ++cut) {
    EXPECT_EQ(internal::FastParseEvent(buf.data(), buf.data() + cut, 4, out, memo), 0u) << cut;
  }
}

TEST(KinetoFastPath, InlineNumbersMatchDecimalToInt64) {
  std::vector<std::string> tokens = {"0",
                                     "-0",
                                     "00",
                                     "01",
                                     "0.5",
                                     "0.",
                                     ".5",
                                     "-.5",
                                     "-",
                                     "",
                                     "1",
                                     "-1",
                                     "7.25",
                                     "1.0",
                                     "1.50",
                                     "1.2345",
                                     "1e3",
                                     "1E-3",
                                     "2.5e1",
                                     "1..2",
                                     "1.2.3",
                                     "1 ",
                                     "12a",
                                     "999999999999999999",
                                     "9999999999999999.99",
                                     "999999999999999.999",
                                     "9223372036854775.807",
                                     "9223372036854775.808",
                                     "-9223372036854775.808",
                                     "18446744073709551.615",
                                     "123456789012345678",
                                     "1234567890123456789",
                                     "1695835572943613.123",
                                     "-922337203685477580.8"};
  std::mt19937_64 rng(11);
  for (int i = 0; i < 20000; ++i) {
    std::string t = rng() % 4 == 0 ? "-" : "";
    int digits = 1 + static_cast<int>(rng() % 20);
    for (int d = 0; d < digits; ++d) t += static_cast<char>('0' + rng() % 10);
    if (rng() % 2) {
      t += '.';
      int frac = static_cast<int>(rng() % 5);
      for (int d = 0; d < frac; ++d) t += static_cast<char>('0' + rng() % 10);
    }
    tokens.push_back(t);
  }
  for (const std::string& t : tokens) {
    for (int scale : {0, 1, 3, 4}) {
      for (bool integral : {false, true}) {
        int64_t a = 12345, b = 12345;
        internal::NumberStatus fast = internal::NumberToInt64(t, scale, integral, a);
        internal::NumberStatus slow = internal::DecimalToInt64(t, scale, integral, b);
        ASSERT_EQ(static_cast<int>(fast), static_cast<int>(slow)) << t << " " << scale << " " << integral;
        if (slow == internal::NumberStatus::kOk) {
          ASSERT_EQ(a, b) << t << " " << scale;
        }
      }
    }
  }
}

// The fast path gathers a number's digits while it validates it; converting from them gives
// exactly what converting the text gives, for every token it takes (and every scale).
TEST(KinetoFastPath, GatheredDigitsConvertAsTheirText) {
  std::vector<std::string> tokens = {
      "0", "-0", "0.5", "-0.5", "1", "-1", "7.25", "1.0", "1.50", "1.2345", "1e3", "1E-3", "2.5e1",
      "999999999999999999", "9999999999999999.99", "999999999999999.999", "9223372036854775.807",
      "9223372036854775.808", "-9223372036854775.808", "18446744073709551.615", "123456789012345678",
      "1234567890123456789", "1695835572943613.123", "-922337203685477580.8", "0.000", "10.0000", "12345678901234567.8",
      "1234567890123456.78",
      // the 32-byte window: 19 digits gathered, 20 not, tokens that fill it
      "1695835541000004.528", "-1695835541000004.528", "9999999999999999999", "9999999999999999.999",
      "999999999999999999.9", "9223372036854775807", "9223372036854775808", "-9223372036854775808",
      "-9223372036854775809", "18446744073709551615", "18446744073709551616", "1844674407370955161.5",
      "1.000000000000000001", "1.0000000000000000001", "0.000000000000000000123", "1234567890123456789012345678901",
      "12345678901234567890123456789012", "1234567890123456789012345678901234567", "123456789012345.6789012345678901",
      "1695835541000004.528e0", "1695835541000004.5e-3"};
  std::mt19937_64 rng(17);
  for (int i = 0; i < 20000; ++i) {
    std::string t = rng() % 4 == 0 ? "-" : "";
    const int digits = 1 + static_cast<int>(rng() % 20);
    t += static_cast<char>('1' + rng() % 9);
    for (int d = 1; d < digits; ++d) t += static_cast<char>('0' + rng() % 10);
    if (rng() % 2) {
      t += '.';
      const int frac = 1 + static_cast<int>(rng() % 5);
      for (int d = 0; d < frac; ++d) t += static_cast<char>('0' + rng() % 10);
    }
    tokens.push_back(t);
  }
  // Each token near the end of the data (within 32 bytes: the byte loop for long ones) and with
  // 40 more bytes after it (the 32-byte window).
  for (const std::string& t : tokens)
    for (const char* after : {", \"dur\": 1}", ", \"dur\": 1, \"cat\": \"a category that pads the event\"}"}) {
      const std::string ev = "{\"ph\": \"X\", \"ts\": " + t + after;
      const std::string buf = ev + std::string(64, ' ');
      RawEvent out;
      internal::FastParseMemo memo;
      ASSERT_EQ(internal::FastParseEvent(buf.data(), buf.data() + ev.size(), 8, out, memo), ev.size()) << ev;
      ASSERT_EQ(out.ts.type, internal::FieldType::kNumber);
      ASSERT_EQ(out.ts.text, t);
      for (int scale : {0, 1, 3, 4}) {
        for (bool integral : {false, true}) {
          int64_t a = 12345, b = 12345;
          internal::NumberStatus gathered = internal::FieldToInt64(out.ts, scale, integral, a);
          internal::NumberStatus text = internal::NumberToInt64(t, scale, integral, b);
          ASSERT_EQ(static_cast<int>(gathered), static_cast<int>(text)) << t << " " << scale << " " << integral;
          if (text == internal::NumberStatus::kOk) {
            ASSERT_EQ(a, b) << t << " " << scale;
          }
        }
      }
    }
}

// ---- one thread against two ----

std::string WriteTemp(const std::string& name, const std::string& content) {
  return ::tg::testing::WriteTempFile(name, content);
}

// With the importer's own reader, which reads gzip and plain files alike.
std::string Gunzip(const std::string& path) {
  internal::GzReader in;
  EXPECT_TRUE(in.Open(path).ok()) << path;
  std::string out(size_t{1} << 16, '\0');
  size_t used = 0, got = 0;
  while (in.Read(out.data() + used, out.size() - used, got).ok() && got > 0) {
    used += got;
    if (used == out.size()) out.resize(out.size() * 2);
  }
  out.resize(used);
  return out;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Imports `path` with one and with two threads: same status, and on success the same string
// table (so the same ids), metadata, processes, quality counters and events.
void ExpectSameWithTwoThreads(const std::string& path) {
  SCOPED_TRACE(path);
  Trace one, two;
  ImportOptions seq, par;
  seq.threads = 1;
  par.threads = 2;
  Status a = ImportTrace(path, seq, &one);
  Status b = ImportTrace(path, par, &two);
  ASSERT_EQ(a.ok(), b.ok());
  EXPECT_EQ(a.message(), b.message());
  if (!a.ok()) return;
  ASSERT_EQ(one.strings.size(), two.strings.size());
  for (StringId id = 0; id < one.strings.size(); ++id) ASSERT_EQ(one.Name(id), two.Name(id)) << id;
  EXPECT_EQ(one.metadata, two.metadata);
  // Processes and quality counters, as text.
  auto state = [](const Trace& t) {
    std::string text;
    for (const Process& p : t.processes) text += std::to_string(p.pid) + "=" + p.name + ";";
    for (const QualityInfo& q : kQualityInfo) text += std::to_string(t.quality.Get(q.id)) + ",";
    return text;
  };
  EXPECT_EQ(state(one), state(two));
  EXPECT_EQ(one.api_calls.correlation, two.api_calls.correlation);
  EXPECT_EQ(one.kernels.correlation, two.kernels.correlation);
  // Every other column through the Chrome export, which writes them all.
  std::string ca = path + ".one.chrome.json", cb = path + ".two.chrome.json";
  ASSERT_TRUE(WriteChromeTrace(one, ca).ok());
  ASSERT_TRUE(WriteChromeTrace(two, cb).ok());
  EXPECT_TRUE(ReadFile(ca) == ReadFile(cb));
  fs::remove(ca);
  fs::remove(cb);
}

TEST(KinetoParallel, FixturesAndRealTracesImportTheSame) {
  int files = 0;
  for (const auto& e : fs::directory_iterator(std::string(TRACEGATE_FIXTURES_DIR) + "/kineto")) {
    if (e.path().extension() == ".json") {
      ExpectSameWithTwoThreads(e.path().string());
      ++files;
    }
  }
  for (std::string dir : {std::string(TRACEGATE_FIXTURES_DIR) + "/real", std::string(TRACEGATE_SHARED_TRACES_DIR)}) {
    if (!fs::exists(dir)) continue;
    for (const auto& e : fs::directory_iterator(dir)) {
      std::string name = e.path().filename().string();
      if (name.size() < 8 || name.compare(name.size() - 8, 8, ".json.gz") != 0) continue;
      // Two threads read plain files only: unpack it first.
      ExpectSameWithTwoThreads(WriteTemp(name.substr(0, name.size() - 3), Gunzip(e.path().string())));
      ++files;
    }
  }
  EXPECT_GE(files, 5);
}

// n launches (cpu_op range, runtime call, flow pair, kernel), as the generator writes them.
std::string Launches(int first, int n, bool with_correlation) {
  std::string out;
  for (int i = first; i < first + n; ++i) {
    std::string id = std::to_string(i), ts = std::to_string(10 * i);
    std::string corr = with_correlation ? ", \"correlation\": " + id : "";
    out += R"({"ph": "X", "cat": "cpu_op", "name": "aten::op)" + std::to_string(i % 7) +
           R"(", "pid": 1, "tid": 2, "ts": )" + ts +
           R"(, "dur": 5},)"
           "\n";
    out += R"({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 2, "ts": )" + ts +
           R"(, "dur": 3, "args": {"cbid": 211)" + corr + "}},\n";
    out += R"({"ph": "s", "id": )" + id + R"(, "pid": 1, "tid": 2, "ts": )" + ts +
           R"(, "cat": "ac2g", "name": "ac2g"},)"
           "\n";
    out += R"({"ph": "f", "id": )" + id + R"(, "pid": 0, "tid": 7, "ts": )" + std::to_string(10 * i + 4) +
           R"(, "cat": "ac2g", "name": "ac2g", "bp": "e"},)"
           "\n";
    out += R"({"ph": "X", "cat": "kernel", "name": "k)" + std::to_string(i % 5) + R"(", "pid": 0, "tid": 7, "ts": )" +
           std::to_string(10 * i + 4) + R"(, "dur": 2, "args": {"stream": 7)" + corr + "}},\n";
  }
  return out;
}

std::string Document(const std::string& events, const std::string& more = "") {
  return "{\"traceEvents\": [\n" + events + R"({"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "p"}})" +
         "\n]" + more + ", \"baseTimeNanoseconds\": 1000}";
}

TEST(KinetoParallel, EventsWithoutCorrelationAndFlowsBoundAcrossTheHalves) {
  // Second half without args.correlation: ids come from flows, and the parts cannot be merged.
  ExpectSameWithTwoThreads(WriteTemp("pending.json", Document(Launches(0, 3000, true) + Launches(3000, 3000, false))));
  // More flows than the builder's ring (16384) before a second event array whose events need
  // them: the ring left by the merged halves must be the one a single builder leaves.
  // 12000 launches write 24000 flows; the ring keeps flows 7616.. (launch 3808's on): launch
  // 3807's kernel flow is gone, 3808's is kept.
  auto late = [](int launch) {
    return R"({"ph": "X", "cat": "kernel", "name": "late", "pid": 0, "tid": 7, "ts": )" +
           std::to_string(10 * launch + 4) + R"(, "dur": 1, "args": {"stream": 7}})";
  };
  std::string later = R"(, "traceEvents": [)" + late(3807) + ", " + late(3808) + "]";
  ExpectSameWithTwoThreads(WriteTemp("ring.json", Document(Launches(0, 12000, true), later)));
}

TEST(KinetoParallel, AWrongGuessOrAnErrorInTheSecondHalfFallsBackToOneThread) {
  // The middle of the file is inside a name that looks like event boundaries: the guessed start
  // is not an element start, which only the first thread can tell.
  std::string fake;
  for (int i = 0; i < 1000; ++i) fake += "}, {";
  std::string tricky;
  for (int i = 0; i < 300; ++i) {
    tricky += R"({"ph": "X", "cat": "cpu_op", "name": ")" + fake + R"(", "pid": 1, "tid": 2, "ts": )" +
              std::to_string(i) +
              R"(, "dur": 1, "args": {"list": [{"x": 1}, {"y": 2}]}},)"
              "\n";
  }
  ExpectSameWithTwoThreads(WriteTemp("tricky.json", Document(tricky)));
  // Errors in the second half: the message is the sequential one.
  std::string events = Launches(0, 2000, true);
  std::string bad = events;
  bad.insert(bad.size() * 3 / 4, "\"oops\": ");
  ExpectSameWithTwoThreads(WriteTemp("bad.json", Document(bad)));
  ExpectSameWithTwoThreads(WriteTemp("truncated.json", Document(events).substr(0, events.size() * 3 / 4)));
  // A bare array (depth 1) and a file with a byte order mark.
  ExpectSameWithTwoThreads(WriteTemp("bare.json", "\xEF\xBB\xBF[" + events + R"({"ph": "i"}])"));
}

std::string Gzip(const std::string& content) {
  std::string path = WriteTemp("tmp.gz", "");
  gzFile gz = gzopen(path.c_str(), "wb1");
  EXPECT_NE(gz, nullptr);
  EXPECT_EQ(gzwrite(gz, content.data(), static_cast<unsigned>(content.size())), static_cast<int>(content.size()));
  gzclose(gz);
  return ReadFile(path);
}

TEST(KinetoParallel, GzipInflatedAheadReadsTheSameAndFailsTheSame) {
  // Larger than the read-ahead's 4 MiB chunks; then cut short, and with a corrupt byte late in it.
  std::string gz = Gzip(Document(Launches(0, 16000, true)));
  ASSERT_GT(gz.size(), 100000u);
  ExpectSameWithTwoThreads(WriteTemp("whole.json.gz", gz));
  ExpectSameWithTwoThreads(WriteTemp("cut.json.gz", gz.substr(0, gz.size() * 3 / 4)));
  std::string corrupt = gz;
  for (size_t i = corrupt.size() * 3 / 4; i < corrupt.size() * 3 / 4 + 64; ++i) corrupt[i] ^= 0x5a;
  ExpectSameWithTwoThreads(WriteTemp("corrupt.json.gz", corrupt));
}

}  // namespace
}  // namespace tg
