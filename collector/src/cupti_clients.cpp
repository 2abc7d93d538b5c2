// Other CUPTI clients in a recorded process; see cupti_clients.h.
#include "collector/src/cupti_clients.h"

#include <elf.h>
#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <set>

namespace tg::internal {

namespace {

// The symbol index of a relocation's r_info (ELF64_R_SYM / ELF32_R_SYM).
constexpr size_t SymbolIndex(uint64_t info) { return sizeof(void*) == 8 ? info >> 32 : info >> 8; }

// One loaded object as dl_iterate_phdr describes it: every pointer read from it is checked against
// its loaded segments first, so a damaged or unusual object is skipped, never read out of bounds.
struct LoadedObject {
  uintptr_t base = 0;
  std::vector<std::pair<uintptr_t, uintptr_t>> segments;  // [lo, hi)
  const ElfW(Dyn)* dynamic = nullptr;
  size_t dynamic_count = 0;

  bool Holds(uintptr_t p, size_t n) const {
    for (const auto& [lo, hi] : segments)
      if (p >= lo && p < hi && n <= hi - p) return true;
    return false;
  }
  // An address entry of .dynamic as the dynamic loader left it: glibc relocates those of a writable
  // .dynamic in place, read-only ones (the vDSO, some architectures) keep the link-time address.
  uintptr_t Address(ElfW(Addr) v) const {
    if (Holds(v, 1)) return v;
    if (Holds(base + v, 1)) return base + v;
    return 0;
  }
};

struct DynamicInfo {
  uintptr_t strtab = 0, symtab = 0;
  size_t strsz = 0, syment = sizeof(ElfW(Sym));
  uintptr_t jmprel = 0, rela = 0, rel = 0;
  size_t pltrelsz = 0, relasz = 0, relsz = 0;
  size_t relaent = sizeof(ElfW(Rela)), relent = sizeof(ElfW(Rel));
  bool plt_is_rela = true;
};

DynamicInfo ReadDynamic(const LoadedObject& o) {
  DynamicInfo d;
  for (size_t i = 0; i < o.dynamic_count && o.dynamic[i].d_tag != DT_NULL; ++i) {
    const ElfW(Dyn)& e = o.dynamic[i];
    switch (e.d_tag) {
      case DT_STRTAB: d.strtab = o.Address(e.d_un.d_ptr); break;
      case DT_SYMTAB: d.symtab = o.Address(e.d_un.d_ptr); break;
      case DT_STRSZ: d.strsz = e.d_un.d_val; break;
      case DT_SYMENT: d.syment = e.d_un.d_val; break;
      case DT_JMPREL: d.jmprel = o.Address(e.d_un.d_ptr); break;
      case DT_PLTRELSZ: d.pltrelsz = e.d_un.d_val; break;
      case DT_PLTREL: d.plt_is_rela = e.d_un.d_val == DT_RELA; break;
      case DT_RELA: d.rela = o.Address(e.d_un.d_ptr); break;
      case DT_RELASZ: d.relasz = e.d_un.d_val; break;
      case DT_RELAENT: d.relaent = e.d_un.d_val; break;
      case DT_REL: d.rel = o.Address(e.d_un.d_ptr); break;
      case DT_RELSZ: d.relsz = e.d_un.d_val; break;
      case DT_RELENT: d.relent = e.d_un.d_val; break;
      default: break;
    }
  }
  return d;
}

// Whether a relocation of the object names an undefined symbol called one of `symbols`.
bool Imports(const LoadedObject& o, const std::vector<std::string_view>& symbols) {
  const DynamicInfo d = ReadDynamic(o);
  if (!d.strtab || !d.symtab || d.strsz == 0 || d.syment < sizeof(ElfW(Sym)) || !o.Holds(d.strtab, d.strsz)) return false;
  const char* strtab = reinterpret_cast<const char*>(d.strtab);
  // Most objects never mention the names: one search of the string table decides for them.
  bool mentioned = false;
  for (std::string_view s : symbols)
    mentioned = mentioned || ::memmem(strtab, d.strsz, s.data(), s.size()) != nullptr;
  if (!mentioned) return false;
  auto undefined_named = [&](size_t index) {
    if (index == 0) return false;
    const uintptr_t at = d.symtab + index * d.syment;
    if (!o.Holds(at, sizeof(ElfW(Sym)))) return false;
    const auto* sym = reinterpret_cast<const ElfW(Sym)*>(at);
    if (sym->st_shndx != SHN_UNDEF || sym->st_name >= d.strsz) return false;
    const char* name = strtab + sym->st_name;
    const size_t max = d.strsz - sym->st_name;
    const size_t len = ::strnlen(name, max);
    if (len == max) return false;  // not terminated inside the table
    return std::find(symbols.begin(), symbols.end(), std::string_view(name, len)) != symbols.end();
  };
  // Each relocation table: (address, size, entry size, whether entries are Rela).
  struct Table {
    uintptr_t at;
    size_t size, entry;
    bool rela;
  };
  const Table tables[] = {{d.jmprel, d.pltrelsz, d.plt_is_rela ? sizeof(ElfW(Rela)) : sizeof(ElfW(Rel)), d.plt_is_rela},
                          {d.rela, d.relasz, d.relaent, true},
                          {d.rel, d.relsz, d.relent, false}};
  for (const Table& t : tables) {
    const size_t min_entry = t.rela ? sizeof(ElfW(Rela)) : sizeof(ElfW(Rel));
    if (!t.at || t.size == 0 || t.entry < min_entry || !o.Holds(t.at, t.size)) continue;
    for (size_t off = 0; off + t.entry <= t.size; off += t.entry) {
      const auto info = t.rela ? reinterpret_cast<const ElfW(Rela)*>(t.at + off)->r_info
                               : reinterpret_cast<const ElfW(Rel)*>(t.at + off)->r_info;
      if (undefined_named(SymbolIndex(info))) return true;
    }
  }
  return false;
}

std::string BaseName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string ProgramPath() {
  char exe[4096];
  const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  return n > 0 ? std::string(exe, static_cast<size_t>(n)) : std::string("(the program)");
}

struct Walk {
  const std::vector<std::string_view>* symbols;
  uintptr_t self;
  std::set<std::string> found;
};

int VisitObject(struct dl_phdr_info* info, size_t, void* data) {
  Walk& w = *static_cast<Walk*>(data);
  LoadedObject o;
  o.base = info->dlpi_addr;
  const ElfW(Phdr)* dynamic = nullptr;
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& p = info->dlpi_phdr[i];
    if (p.p_type == PT_LOAD && p.p_memsz > 0) o.segments.emplace_back(o.base + p.p_vaddr, o.base + p.p_vaddr + p.p_memsz);
    if (p.p_type == PT_DYNAMIC) dynamic = &p;
  }
  if (!dynamic || (w.self && o.Holds(w.self, 1))) return 0;
  o.dynamic = reinterpret_cast<const ElfW(Dyn)*>(o.base + dynamic->p_vaddr);
  o.dynamic_count = dynamic->p_memsz / sizeof(ElfW(Dyn));
  if (!o.Holds(reinterpret_cast<uintptr_t>(o.dynamic), o.dynamic_count * sizeof(ElfW(Dyn)))) return 0;
  if (!Imports(o, *w.symbols)) return 0;
  const char* name = info->dlpi_name;
  w.found.insert(BaseName(name && *name ? std::string(name) : ProgramPath()));
  return 0;
}

std::vector<std::string> Split(const std::string& text, std::string_view sep) {
  std::vector<std::string> out;
  size_t from = 0;
  while (from <= text.size()) {
    size_t at = text.find(sep, from);
    if (at == std::string::npos) at = text.size();
    if (at > from) out.push_back(text.substr(from, at - from));
    from = at + sep.size();
  }
  return out;
}

// "pid 652" -> 652; -1 when the text is not that.
int64_t PidOf(std::string_view text) {
  if (text.rfind("pid ", 0) != 0) return -1;
  const std::string digits(text.substr(4));
  char* end = nullptr;
  const long long v = std::strtoll(digits.c_str(), &end, 10);
  return end != digits.c_str() && *end == '\0' && v > 0 ? v : -1;
}

bool PyTorchLibrary(const std::string& libs) {
  return libs.find("libtorch") != std::string::npos || libs.find("kineto") != std::string::npos;
}

}  // namespace

std::vector<std::string> ObjectsImporting(const std::vector<std::string_view>& symbols, const void* self) {
  Walk w{&symbols, reinterpret_cast<uintptr_t>(self), {}};
  if (!symbols.empty()) ::dl_iterate_phdr(VisitObject, &w);
  return {w.found.begin(), w.found.end()};
}

std::map<std::string, std::string> OtherCuptiClientsMetadata(int64_t pid, const std::vector<std::string>& clients,
                                                             bool refused) {
  std::map<std::string, std::string> md;
  const std::string who = "pid " + std::to_string(pid);
  if (!clients.empty()) {
    std::string list;
    for (const std::string& c : clients) list += (list.empty() ? "" : ", ") + c;
    md[kOtherCuptiClientsKey] = who + ": " + list;
  }
  if (refused) md[kCuptiRefusedKey] = who;
  return md;
}

std::vector<std::string> OtherCuptiClientLines(const std::map<std::string, std::string, std::less<>>& metadata) {
  std::map<int64_t, std::string> libs;  // pid -> "libA.so, libB.so"
  std::set<int64_t> refused;
  if (auto it = metadata.find(kOtherCuptiClientsKey); it != metadata.end())
    for (const std::string& entry : Split(it->second, "; ")) {
      const size_t colon = entry.find(": ");
      const int64_t pid = colon == std::string::npos ? -1 : PidOf(std::string_view(entry).substr(0, colon));
      if (pid > 0) libs[pid] = entry.substr(colon + 2);
    }
  if (auto it = metadata.find(kCuptiRefusedKey); it != metadata.end())
    for (const std::string& entry : Split(it->second, "; "))
      if (int64_t pid = PidOf(entry); pid > 0) refused.insert(pid);
  std::set<int64_t> pids(refused);
  for (const auto& [pid, l] : libs) pids.insert(pid);
  std::vector<std::string> lines;
  auto complete = [](const char* what) {
    return std::string("CUPTI serves one profiler per process and tracegate held it, so ") + what +
           "; tracegate's recording of the process is unaffected. Profile with one tool at a time: run the other "
           "profiler without tracegate record";
  };
  for (int64_t pid : pids) {
    auto it = libs.find(pid);
    const std::string l = it == libs.end() ? std::string() : it->second;
    const std::string tool = l.empty()           ? "another profiler"
                             : PyTorchLibrary(l) ? "PyTorch's profiler (torch.profiler, Kineto; " + l + ")"
                                                 : "another CUPTI-based profiler (" + l + ")";
    const std::string who = "pid " + std::to_string(pid) + ": ";
    if (refused.count(pid))
      lines.push_back(who + tool + " tried to start and CUPTI refused it (CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED). " +
                      complete("that profiler recorded no CUDA activity"));
    else
      lines.push_back(who + tool + " is loaded and profiles through CUPTI. " +
                      complete("if it profiled CUDA in this process, it recorded no CUDA activity"));
  }
  return lines;
}

}  // namespace tg::internal
