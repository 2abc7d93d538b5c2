// Kernel classes by op and by name. The patterns are built from kernel names seen in PyTorch, cuDNN,
// cuBLAS, hipBLASLt, CUTLASS, ck_tile, NCCL, vLLM and TorchInductor traces; kernel_class_test.cpp
// lists the names each must classify, and the ops that decide a class.
#include "tracegate/analyzer/kernel_class.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <tuple>

#include "analyzer/analysis/correlation.h"
#include "analyzer/util/demangle.h"

namespace tg {

using internal::Demangle;
using internal::OpBaseName;

namespace {

// How demanglers spell an anonymous namespace (c++filt, Nsight Systems); part of the name, not
// brackets to skip.
constexpr std::array<std::string_view, 2> kAnonymousNamespaces{"(anonymous namespace)", "<unnamed>"};

// The length of the anonymous-namespace spelling at `i`, 0 when there is none.
size_t AnonymousNamespaceAt(std::string_view name, size_t i) {
  for (std::string_view a : kAnonymousNamespaces) {
    if (name.substr(i).starts_with(a)) return a.size();
  }
  return 0;
}

// Where the parameter list of a demangled function name starts: the first "(" at bracket depth 0
// that follows a name and is not "(anonymous namespace)"; npos for a name without one (Triton,
// cuBLAS "ampere_sgemm_128x64_nn") or with unbalanced brackets (not C++).
size_t ParameterListStart(std::string_view demangled) {
  int depth = 0;
  for (size_t i = 0; i < demangled.size(); ++i) {
    char ch = demangled[i];
    if (size_t anon = depth == 0 ? AnonymousNamespaceAt(demangled, i) : 0) {
      i += anon - 1;
    } else if (ch == '(' && depth == 0 && i > 0) {
      return i;
    } else if (ch == '<' || ch == '(' || ch == '[' || ch == '{') {
      ++depth;
    } else if ((ch == '>' || ch == ')' || ch == ']' || ch == '}') && --depth < 0) {
      return std::string_view::npos;
    }
  }
  return std::string_view::npos;
}

// A short token only counts between non-letters ("_add_", "<scale>", "bmm_kernel"), so "padding",
// "address" or "multi" do not match add / mul. Digits may follow ("pad2d"). ECMAScript has no
// look-behind, so the left boundary consumes one character; the pattern is searched, not matched.
std::string Tokens(const char* alternatives) { return std::string("(^|[^a-z])(") + alternatives + ")(?![a-z])"; }

std::array<std::string, kKernelClassCount> BuildDefaults() {
  std::array<std::string, kKernelClassCount> p;
  auto set = [&p](KernelClass c, std::string pattern) { p[static_cast<size_t>(c)] = std::move(pattern); };
  set(KernelClass::kCommunication,
      "nccl|rccl|all_?reduce|all_?gather|reduce_?scatter|all_?to_?all|sendrecv|cross_device_reduce");
  // Fused attention: FMHA (cutlass fmha_cutlassF, ck / ck_tile FmhaFwd / FmhaBatchPrefill), flash
  // attention (flash_fwd_kernel, flash_bwd_*, cuDNN's *_flash_fprop_*), AMD's Triton attn_fwd,
  // vLLM's paged_attention_* and kernel_unified_attention_*, cuDNN SDPA.
  set(KernelClass::kAttention,
      "fmha|flash_?(fwd|bwd|fprop|bprop)|flash_?attn|flash_?attention|attn_(fwd|bwd)|paged_?attention|"
      "unified_?attention|sdpa");
  // "conv" but not "convert" / "conversion" (NumericConverter sits in many template arguments).
  set(KernelClass::kConv, "conv(?!ert|ers)|fprop|dgrad|wgrad|scudnn|winograd|implicit_?gemm|implicit_precomp|fft2d");
  // "gemm" but not FBGEMM's embedding and quantisation kernels ("fbgemm_gpu::..."); hipBLASLt /
  // Tensile kernels are "Cijk_<layout>_..." (their "_Bias_" is the epilogue, no add).
  set(KernelClass::kGemm,
      "(^|[^b])gemm|gemv|matmul|cutlass|xmma|nvjet|splitkreduce|(^|[^a-z])cijk_|^triton_tem_|" +
          Tokens("b?mm|addmm|baddbmm"));
  set(KernelClass::kTransform,
      "transpose|permute|nchw[a-z_]*to_?nhwc|nhwc[a-z_]*to_?nchw|nchw2nhwc|nhwc2nchw|im2col|col2im|vol2col|"
      "col2vol|concat|catarray|copy(?!sign)|" +
          Tokens("cat|pad|flip|roll"));
  set(KernelClass::kNormalization, "(batch|layer|group|instance|rms)_?norm|rowwisemoments|gammabetabackward|" +
                                       Tokens("bn_(fw|bw|fwd|bwd)|ln_(fwd|bwd)"));
  set(KernelClass::kActivation,
      "relu|gelu|silu|swish|swiglu|geglu|sigmoid|tanh|softplus|softsign|mish|clamp|threshold|activation|" +
          Tokens("s?elu"));
  set(KernelClass::kElementwise,
      "elementwise|element_wise|pointwise|multi_tensor_apply|dropout|foreach|epilogue::impl|" +
          Tokens("add|sub|mul|div|bias|scale|scal|axpy|fill|cast|neg|abs|exp|pow|sqrt|rsqrt|reciprocal|where|lerp|"
                 "addcmul|addcdiv"));
  set(KernelClass::kReduction,
      "softmax|reduce|reduction|pool|scan|" + Tokens("sum|mean|argmax|argmin|amax|amin|prod|norm|logsumexp|topk"));
  return p;
}

char Lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

// Case-insensitive matching without std::regex::icase, which is 2-3x slower in libstdc++: names
// and patterns are lower-cased, except the letter of an escape ("\D", "\W", "\S" keep their meaning).
std::string LowerPattern(std::string_view pattern) {
  std::string out(pattern);
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == '\\') {
      ++i;  // the escaped character stays as written
    } else {
      out[i] = Lower(out[i]);
    }
  }
  return out;
}

Status Compile(size_t cls, const std::string& pattern, std::regex* out) {
  if (pattern.empty()) return Status::Ok();  // the class is off: nothing is tried
  try {
    *out = std::regex(LowerPattern(pattern), std::regex::ECMAScript | std::regex::nosubs | std::regex::optimize);
  } catch (const std::regex_error& e) {
    return InvalidInput("kernel class '" + std::string(kKernelClassNames[cls]) + "': invalid regular expression '" +
                        pattern + "': " + e.what());
  }
  return Status::Ok();
}

bool IsWordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Words that never tell two instances apart by meaning.
bool Noise(const std::string& t) {
  static const std::set<std::string> kNoise{"void",   "const",  "unsigned", "signed",   "long",   "int",     "char",
                                            "short",  "bool",   "lambda",   "instance", "operator", "anonymous",
                                            "namespace", "struct", "class",  "auto",    "true",   "false",   "T1",
                                            "T2",     "T3",     "T4",       "std",      "at",     "detail",  "c10"};
  return kNoise.count(t) > 0;
}

// The words of a name after its short name, in order, each once.
std::vector<std::string> Words(const std::string& name, const std::string& short_name) {
  std::set<std::string> own;
  for (size_t i = 0; i < short_name.size();) {
    size_t j = i;
    while (j < short_name.size() && IsWordChar(short_name[j])) ++j;
    if (j > i) own.insert(short_name.substr(i, j - i));
    i = j + 1;
  }
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (size_t i = 0; i < name.size();) {
    size_t j = i;
    while (j < name.size() && IsWordChar(name[j])) ++j;
    if (j > i) {
      std::string w = name.substr(i, j - i);
      if (!own.count(w) && !Noise(w) && seen.insert(w).second) out.push_back(std::move(w));
    }
    i = j + 1;
  }
  return out;
}

bool HasLetter(const std::string& w) {
  return std::any_of(w.begin(), w.end(), [](char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; });
}

}  // namespace

const std::array<std::string, kKernelClassCount>& DefaultKernelClassPatterns() {
  static const std::array<std::string, kKernelClassCount> defaults = BuildDefaults();
  return defaults;
}

bool ParseKernelClass(std::string_view name, KernelClass* out) {
  for (size_t c = 0; c < kKernelClassCount; ++c) {
    if (name == kKernelClassNames[c]) {
      *out = static_cast<KernelClass>(c);
      return true;
    }
  }
  return false;
}

Status KernelClassifier::Create(const std::map<std::string, std::string>& overrides, KernelClassifier* out) {
  KernelClassifier k;
  k.patterns_ = DefaultKernelClassPatterns();
  for (const auto& [name, pattern] : overrides) {
    KernelClass c;
    if (!ParseKernelClass(name, &c) || c == KernelClass::kOther) {
      std::string known;
      for (size_t i = 0; i + 1 < kKernelClassCount; ++i) known += (i ? ", " : "") + std::string(kKernelClassNames[i]);
      return InvalidInput("unknown kernel class '" + name + "' (known: " + known + ")");
    }
    k.patterns_[static_cast<size_t>(c)] = pattern;
  }
  for (size_t c = 0; c < kKernelClassCount; ++c) {
    TG_RETURN_IF_ERROR(Compile(c, k.patterns_[c], &k.regexes_[c]));
  }
  *out = std::move(k);
  return Status::Ok();
}

KernelClass KernelClassifier::Classify(std::string_view demangled_name) const {
  for (const KernelNamePrefix& p : kTritonPrefixes) {
    if (demangled_name.starts_with(p.prefix)) return p.cls;
  }
  // Parameter types are noise ("scal_kernel<...>(cublasTransposeParams<float>, ...)" is no transpose).
  std::string name(demangled_name.substr(0, ParameterListStart(demangled_name)));
  for (char& ch : name) ch = Lower(ch);
  for (size_t c = 0; c < kKernelClassCount; ++c) {
    if (patterns_[c].empty()) continue;
    if (std::regex_search(name.begin(), name.end(), regexes_[c])) return static_cast<KernelClass>(c);
  }
  return KernelClass::kOther;
}

bool OpKernelClass(std::string_view op, KernelClass* out) {
  op = OpBaseName(op);  // emit_nvtx's ranges append ", seq = ..., sizes = [...]" to the op's name
  auto set = [out](KernelClass c) {
    *out = c;
    return true;
  };
  if (op.starts_with("c10d::") || op.starts_with("c10d_functional::") || op.starts_with("_c10d_functional::") ||
      op.starts_with("nccl:") || op == "record_param_comms")
    return set(KernelClass::kCommunication);
  std::string lower(op);
  for (char& ch : lower) ch = Lower(ch);
  const std::string_view l(lower);
  const size_t colons = l.rfind("::");
  const std::string_view ns = colons == std::string_view::npos ? std::string_view() : l.substr(0, colons);
  std::string_view fn = colons == std::string_view::npos ? l : l.substr(colons + 2);
  auto has = [&](std::string_view part) { return l.find(part) != std::string_view::npos; };
  // Attention: ATen's SDPA and its backends, and the fused ops of serving engines
  // (vllm::unified_attention, _C::paged_attention_v1, flash_attn::_flash_attn_forward).
  if (l == "aten::scaled_dot_product_attention" || l.starts_with("aten::_scaled_dot_product_") ||
      l.starts_with("aten::_flash_attention_") || l.starts_with("aten::_efficient_attention") ||
      l.starts_with("aten::_cudnn_attention") || has("flash_attn") || has("flash_attention") ||
      has("paged_attention") || has("unified_attention"))
    return set(KernelClass::kAttention);
  if (ns == "aten") {
    static constexpr std::string_view kGemm[] = {"mm",     "addmm",      "linear", "bmm",        "baddbmm",
                                                 "addbmm", "matmul",     "mv",     "addmv",      "_scaled_mm",
                                                 "_int_mm", "_addmm_activation"};
    if (std::find(std::begin(kGemm), std::end(kGemm), fn) != std::end(kGemm)) return set(KernelClass::kGemm);
  }
  // Norms in any namespace (aten::native_layer_norm, aten::cudnn_batch_norm_backward,
  // _C::fused_add_rms_norm, vllm's _C::rms_norm).
  while (fn.starts_with('_')) fn.remove_prefix(1);
  for (std::string_view norm : {"layer_norm", "batch_norm", "group_norm", "instance_norm", "rms_norm"})
    if (fn.find(norm) != std::string_view::npos) return set(KernelClass::kNormalization);
  // Convolutions: aten::conv2d, aten::convolution, aten::_convolution, aten::cudnn_convolution,
  // aten::convolution_backward, aten::miopen_convolution, aten::slow_conv2d_forward; not
  // aten::_convert_* or conversions.
  if (ns == "aten" && ((fn.starts_with("conv") && !fn.starts_with("convert")) ||
                       fn.find("convolution") != std::string_view::npos || fn.starts_with("slow_conv") ||
                       fn.starts_with("thnn_conv")))
    return set(KernelClass::kConv);
  return false;
}

std::vector<KernelClass> ClassifyKernels(const Trace& trace, const KernelClassifier& classifier,
                                         const std::vector<StringId>* kernel_ops,
                                         const std::vector<std::string>* extra_op_names) {
  constexpr uint8_t kUnset = 0xff, kNoClass = 0xfe;
  std::vector<uint8_t> by_name(trace.strings.size(), kUnset);
  // Per op name: its class, or kNoClass when the op says none.
  const size_t extra = extra_op_names ? extra_op_names->size() : 0;
  std::vector<uint8_t> by_op(kernel_ops ? trace.strings.size() + extra : 0, kUnset);
  auto op_name = [&](StringId op) {
    return op < trace.strings.size() ? trace.Name(op) : std::string_view((*extra_op_names)[op - trace.strings.size()]);
  };
  std::vector<KernelClass> out(trace.kernels.size());
  const bool any_metadata = trace.kernels.collective.stored() > 0;
  const bool ops = kernel_ops && kernel_ops->size() == out.size();
  for (size_t i = 0; i < out.size(); ++i) {
    if (any_metadata && HasCollectiveMetadata(trace, i)) {
      out[i] = KernelClass::kCommunication;
      continue;
    }
    uint8_t& c = by_name[trace.kernels.name[i]];
    if (c == kUnset) c = static_cast<uint8_t>(classifier.Classify(Demangle(trace.Name(trace.kernels.name[i]))));
    out[i] = static_cast<KernelClass>(c);
    const StringId op = ops ? (*kernel_ops)[i] : StringTable::kEmpty;
    if (op == StringTable::kEmpty) continue;
    uint8_t& o = by_op[op];
    if (o == kUnset) {
      KernelClass k;
      o = OpKernelClass(op_name(op), &k) ? static_cast<uint8_t>(k) : kNoClass;
    }
    if (o != kNoClass) out[i] = CombineKernelClass(static_cast<KernelClass>(o), out[i]);
  }
  return out;
}

std::string ShortKernelName(std::string_view demangled) {
  size_t params = ParameterListStart(demangled);
  std::string_view head = demangled.substr(0, params);
  // Drop the template arguments: everything inside <> (and other brackets) at depth 0.
  std::string out;
  int depth = 0;
  for (size_t i = 0; i < head.size(); ++i) {
    char ch = head[i];
    if (size_t anon = depth == 0 ? AnonymousNamespaceAt(head, i) : 0) {
      out += head.substr(i, anon);
      i += anon - 1;
    } else if (ch == '<' || ch == '(' || ch == '[' || ch == '{') {
      ++depth;
    } else if (ch == '>' || ch == ')' || ch == ']' || ch == '}') {
      if (--depth < 0) return std::string(demangled);  // not C++: leave it alone
    } else if (depth == 0) {
      out += ch;
    }
  }
  if (depth != 0) return std::string(demangled);
  while (!out.empty() && out.back() == ' ') out.pop_back();
  // A function's return type ends at the last space that is not inside "(anonymous namespace)".
  if (params != std::string_view::npos) {
    for (size_t i = out.size(); i-- > 0;) {
      if (out[i] == ' ' && !std::string_view(out).substr(0, i + 1).ends_with("(anonymous ")) {
        out.erase(0, i + 1);
        break;
      }
    }
  }
  return out.empty() ? std::string(demangled) : out;
}

std::map<std::string, KernelLabel> KernelLabels(const std::vector<std::string>& names) {
  std::map<std::string, KernelLabel> out;
  std::map<std::string, std::vector<std::string>> groups;  // short name -> distinct names
  for (const std::string& n : names) {
    auto [it, fresh] = out.try_emplace(n);
    if (!fresh) continue;
    it->second.short_name = ShortKernelName(n);
    groups[it->second.short_name].push_back(n);
  }
  for (const auto& [short_name, members] : groups) {
    if (members.size() < 2) continue;
    std::vector<std::vector<std::string>> words;
    std::map<std::string, size_t> members_with;
    for (const std::string& m : members) {
      words.push_back(Words(m, short_name));
      for (const std::string& w : words.back()) members_with[w]++;
    }
    for (size_t i = 0; i < members.size(); ++i) {
      // Greedy: add the word that leaves the fewest other members sharing every chosen word;
      // words with letters before bare numbers, then the rarer, then the earlier.
      std::set<size_t> alike;
      for (size_t j = 0; j < members.size(); ++j)
        if (j != i) alike.insert(j);
      std::vector<size_t> chosen;  // positions in words[i]
      while (!alike.empty() && chosen.size() < 3) {
        size_t best = words[i].size(), best_left = alike.size();
        for (size_t w = 0; w < words[i].size(); ++w) {
          if (std::find(chosen.begin(), chosen.end(), w) != chosen.end()) continue;
          size_t left = 0;
          for (size_t j : alike)
            left += std::find(words[j].begin(), words[j].end(), words[i][w]) != words[j].end();
          if (left == alike.size()) continue;  // tells none apart
          auto key = [&](size_t x, size_t l) {
            return std::make_tuple(!HasLetter(words[i][x]), l, members_with[words[i][x]], x);
          };
          if (best == words[i].size() || key(w, left) < key(best, best_left)) best = w, best_left = left;
        }
        if (best == words[i].size()) break;  // nothing tells the rest apart (same words)
        chosen.push_back(best);
        for (auto it = alike.begin(); it != alike.end();)
          it = std::find(words[*it].begin(), words[*it].end(), words[i][best]) == words[*it].end() ? alike.erase(it)
                                                                                                     : std::next(it);
      }
      std::sort(chosen.begin(), chosen.end());
      std::string hint;
      for (size_t w : chosen) hint += (hint.empty() ? "" : " ") + words[i][w];
      out[members[i]].hint = hint.size() > kKernelHintChars ? hint.substr(0, kKernelHintChars - 3) + "..." : hint;
    }
  }
  return out;
}

}  // namespace tg
