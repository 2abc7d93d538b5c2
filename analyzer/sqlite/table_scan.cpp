#include "analyzer/sqlite/table_scan.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <utility>

namespace tg::internal {

namespace {

uint32_t Be16(const unsigned char* p) { return (uint32_t{p[0]} << 8) | p[1]; }
uint32_t Be32(const unsigned char* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

// SQLite's variable-length integer (1-9 bytes, big-endian, 7 bits a byte, the ninth byte whole),
// read from [p, end); false when it runs past end.
inline bool Varint(const unsigned char*& p, const unsigned char* end, uint64_t& v) {
  if (p < end && *p < 0x80) {  // most are one byte: serial types of small values, short sizes
    v = *p++;
    return true;
  }
  v = 0;
  for (int i = 0; i < 8; ++i) {
    if (p >= end) return false;
    const unsigned char b = *p++;
    v = (v << 7) | (b & 0x7f);
    if (!(b & 0x80)) return true;
  }
  if (p >= end) return false;
  v = (v << 8) | *p++;
  return true;
}

bool FileExists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

// The affinity SQLite gives a declared type REAL (its rules, in order: INT, then CHAR/CLOB/TEXT,
// then BLOB, then REAL/FLOA/DOUB): a column whose INTEGER values read back as REAL.
// `type` upper-cased.
bool RealAffinity(const std::string& type) {
  auto has = [&](const char* s) { return type.find(s) != std::string::npos; };
  if (has("INT") || has("CHAR") || has("CLOB") || has("TEXT") || has("BLOB") || type.empty()) return false;
  return has("REAL") || has("FLOA") || has("DOUB");
}

bool IsSpace(unsigned char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

// sqlite3Atoi64's value (UTF-8): leading space, a sign, digits up to the first non-digit;
// clamped to int64 beyond it.
int64_t Atoi64(const unsigned char* p, uint32_t n) {
  const unsigned char* end = p + n;
  while (p < end && IsSpace(*p)) ++p;
  bool neg = false;
  if (p < end && (*p == '-' || *p == '+')) neg = *p++ == '-';
  while (p < end && *p == '0') ++p;
  const unsigned char* digits = p;
  uint64_t u = 0;
  while (p < end && *p >= '0' && *p <= '9') u = u * 10 + (*p++ - '0');
  const size_t count = static_cast<size_t>(p - digits);
  constexpr uint64_t kLargest = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  const int64_t clamp = neg ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int64_t>::max();
  if (count > 19) return clamp;
  if (count == 19 && std::memcmp(digits, "9223372036854775808", 19) >= 0) return clamp;
  if (u > kLargest) return clamp;
  return neg ? -static_cast<int64_t>(u) : static_cast<int64_t>(u);
}

// Bytes a value of serial type t < 128 takes (types 10 and 11, reserved, take none: SQLite reads
// them as NULL).
constexpr auto kSerialLength = [] {
  std::array<uint64_t, 128> len{};
  constexpr uint64_t kFixed[] = {0, 1, 2, 3, 4, 6, 8, 8, 0, 0, 0, 0};
  for (uint64_t t = 0; t < 128; ++t) len[t] = t < 12 ? kFixed[t] : (t - 12) / 2;
  return len;
}();

constexpr size_t kWindowBytes = size_t{1} << 20;  // children of an interior page read at a time
constexpr size_t kMaxDepth = 40;                  // SQLite's own cursors stop at 20

}  // namespace

// ---- PageFile -------------------------------------------------------------------------------

FileHeader ParseFileHeader(const unsigned char* h) {
  FileHeader f;
  f.page_size = Be16(h + 16) == 1 ? 65536 : Be16(h + 16);
  f.reserved = h[20];
  f.page_count = Be32(h + 28);
  f.pages_valid = f.page_count != 0 && Be32(h + 24) == Be32(h + 92);
  f.rollback = h[18] == 1 && h[19] == 1;
  f.fractions = h[21] == 64 && h[22] == 32 && h[23] == 32;
  f.utf8 = Be32(h + 56) == 1;
  return f;
}

namespace {

std::atomic<bool> direct_reads{true};
std::atomic<uint64_t> scans_opened{0}, scans_split{0};

// One read-only descriptor per file (device and inode) for every PageFile of the process, closed
// when the last one closes: closing a descriptor would drop the locks of SQLite's connections
// to the same file (PageFile's own are declared before them and close after).
class SharedDescriptors {
 public:
  static SharedDescriptors& Get() {
    static SharedDescriptors* d = new SharedDescriptors;  // never destroyed: used until exit
    return *d;
  }
  // The file's shared descriptor (opened if no PageFile has it open), or -1.
  int Open(const std::string& path) {
    std::lock_guard<std::mutex> lock(mutex_);
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return -1;
    if (auto it = open_.find({st.st_dev, st.st_ino}); it != open_.end()) {
      ++it->second.users;
      return it->second.fd;
    }
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    // Keyed by what was opened (the path may have been replaced since the stat). A descriptor
    // that cannot be keyed, or whose file another entry has (a replaced path), is kept open
    // until exit: closing it would drop the locks.
    if (::fstat(fd, &st) != 0) return -1;
    auto [it, inserted] = open_.try_emplace(std::pair{st.st_dev, st.st_ino}, Entry{fd, 1});
    if (!inserted) ++it->second.users;
    return it->second.fd;
  }
  void Close(int fd) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = open_.begin(); it != open_.end(); ++it)
      if (it->second.fd == fd && --it->second.users == 0) {
        ::close(fd);
        open_.erase(it);
        return;
      }
  }

 private:
  struct Entry {
    int fd;
    int users;
  };
  std::mutex mutex_;
  std::map<std::pair<dev_t, ino_t>, Entry> open_;
};

}  // namespace

void SetDirectReadsForTesting(bool on) { direct_reads = on; }
ScanCounts ScanCountsForTesting() { return {scans_opened.load(), scans_split.load()}; }

PageFile::~PageFile() {
  if (fd_ >= 0) SharedDescriptors::Get().Close(fd_);
}

Status PageFile::Open(const std::string& path, const std::string& label) {
  label_ = label;
  usable_ = false;
  // Declining keeps the descriptor (if one was opened) until the destructor: see the header.
  auto decline = [&](std::string why) {
    why_ = std::move(why);
    return Status::Ok();
  };
  if (!direct_reads) return decline("direct reads are off (a test)");
  // A rollback journal or a WAL beside the file may hold what the file itself does not yet.
  if (FileExists(path + "-journal") || FileExists(path + "-wal")) return decline("a journal or WAL file is beside it");
  if (fd_ < 0) fd_ = SharedDescriptors::Get().Open(path);
  if (fd_ < 0) return decline("cannot open");
  unsigned char h[100];
  ssize_t got = ::pread(fd_, h, sizeof h, 0);
  if (got != static_cast<ssize_t>(sizeof h) || std::memcmp(h, "SQLite format 3", 16) != 0)
    return decline("not an SQLite 3 file");
  const FileHeader header = ParseFileHeader(h);
  const uint32_t page = header.page_size;
  if (page < 512 || page > 65536 || (page & (page - 1)) != 0) return decline("page size");
  if (!header.rollback) return decline("WAL mode");
  if (!header.fractions) return decline("payload fractions");
  if (page - header.reserved < 480) return decline("reserved bytes");
  if (!header.utf8) return decline("not UTF-8");
  struct stat st {};
  if (::fstat(fd_, &st) != 0) return decline("cannot stat");
  // As SQLite's pager: the header's page count when it is valid, else the file's size in pages
  // (a partial last page counts).
  const uint64_t pages = header.pages_valid ? header.page_count : (static_cast<uint64_t>(st.st_size) + page - 1) / page;
  page_size_ = page;
  usable_size_ = page - header.reserved;
  page_count_ = static_cast<uint32_t>(std::min<uint64_t>(pages, UINT32_MAX));
  usable_ = true;
  return Status::Ok();
}

bool PageFile::Read(uint32_t first, uint32_t count, unsigned char* out) const {
  if (!usable_ || first == 0 || count == 0 || first > page_count_ || count > page_count_ - first + 1) return false;
  size_t want = size_t{count} * page_size_;
  auto offset = static_cast<off_t>(uint64_t{first - 1} * page_size_);
  while (want > 0) {
    ssize_t n = ::pread(fd_, out, want, offset);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) {  // the file ends here
      std::memset(out, 0, want);
      return true;
    }
    out += n;
    offset += n;
    want -= static_cast<size_t>(n);
  }
  return true;
}

Status PageFile::Corrupt() const {
  return InvalidInput(label_ + ": not a valid SQLite database (cannot read rows: database disk image is malformed)");
}

Status PageFile::IoFailure() const { return IoError(label_ + ": cannot read rows: disk I/O error"); }

// ---- TableScan ------------------------------------------------------------------------------

struct TableScan::Frame {
  std::vector<uint32_t> children;     // the interior page's children, in key order
  size_t next = 0;                    // the next child to enter
  std::vector<unsigned char> window;  // children [first, first + count) read ahead
  size_t first = 0, count = 0;
};

TableScan::TableScan() = default;
TableScan::~TableScan() = default;

Status TableScan::Open(const Db& db, const PageFile& file, const std::string& table,
                       const std::vector<std::string_view>& columns, bool& usable) {
  usable = false;
  if (!file.usable()) return Status::Ok();
  file_ = &file;
  Stmt q;
  TG_RETURN_IF_ERROR(q.Prepare(db, "SELECT rootpage FROM sqlite_master WHERE type = 'table' AND name = ?"));
  q.Text(1, table);
  Status s;
  if (!q.Next(s)) return s;
  const int64_t root = q.IntOr(0, 0);
  if (root < 2 || root > file.page_count()) return Status::Ok();  // SQLite will say what is wrong

  struct Column {
    std::string name, type;
    bool has_default, pk;
  };
  std::vector<Column> table_columns;
  TG_RETURN_IF_ERROR(
      q.Prepare(db, "SELECT name, type, dflt_value IS NOT NULL, pk, hidden FROM pragma_table_xinfo(?) ORDER BY cid"));
  q.Text(1, table);
  int pk_columns = 0;
  while (q.Next(s)) {
    if (q.Int(4) != 0) return Status::Ok();  // a generated or hidden column: not stored as listed
    table_columns.push_back({std::string(q.Text(0)), std::string(q.Text(1)), q.Int(2) != 0, q.Int(3) != 0});
    pk_columns += q.Int(3) != 0;
  }
  if (!s.ok()) return s;
  // An INTEGER PRIMARY KEY is the rowid's alias unless SQLite made an index for it (INTEGER
  // PRIMARY KEY DESC, a quirk it keeps): the alias reads the cell's rowid.
  bool pk_index = false;
  TG_RETURN_IF_ERROR(q.Prepare(db, "SELECT count(*) FROM pragma_index_list(?) WHERE origin = 'pk'"));
  q.Text(1, table);
  if (q.Next(s)) pk_index = q.Int(0) > 0;
  if (!s.ok()) return s;
  want_.assign(table_columns.size(), -1);
  real_affinity_.assign(columns.size(), 0);
  rowid_slot_ = -1;
  any_real_affinity_ = false;
  for (size_t slot = 0; slot < columns.size(); ++slot) {
    for (size_t k = 0; k < table_columns.size(); ++k) {
      const Column& c = table_columns[k];
      if (c.name != columns[slot]) continue;  // exact, as SelectColumns decides what a table has
      if (c.has_default || want_[k] >= 0) return Status::Ok();
      std::string upper = c.type;
      std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char x) { return std::toupper(x); });
      if (c.pk && pk_columns == 1 && !pk_index && upper == "INTEGER") rowid_slot_ = static_cast<int>(slot);
      want_[k] = static_cast<int>(slot);
      real_affinity_[slot] = RealAffinity(upper);
      any_real_affinity_ |= real_affinity_[slot] != 0;
    }
  }
  while (!want_.empty() && want_.back() < 0) want_.pop_back();  // decode no further than needed
  values_.assign(columns.size(), Value{});

  // The root: a table b-tree page (an index page here is a WITHOUT ROWID table).
  leaf_.resize(file.page_size());
  if (!file.Read(static_cast<uint32_t>(root), 1, leaf_.data())) return file.IoFailure();
  if (leaf_[0] != 0x05 && leaf_[0] != 0x0d) return Status::Ok();
  depth_ = 0;
  pages_entered_ = 0;
  done_ = false;
  leaf_data_ = nullptr;
  if (!EnterPage(static_cast<uint32_t>(root), leaf_.data(), s)) return s;
  usable = true;
  ++scans_opened;
  return Status::Ok();
}

size_t TableScan::RootChildren() const { return depth_ == 1 && pages_entered_ == 1 ? stack_[0]->children.size() : 0; }

void TableScan::KeepRootChildren(size_t from, size_t to) {
  if (RootChildren() == 0) return;
  ++scans_split;
  std::vector<uint32_t>& children = stack_[0]->children;
  to = std::min(to, children.size());
  from = std::min(from, to);
  children.erase(children.begin() + static_cast<std::ptrdiff_t>(to), children.end());
  children.erase(children.begin(), children.begin() + static_cast<std::ptrdiff_t>(from));
}

bool TableScan::Fail(Status& status, Status why) {
  status = std::move(why);
  done_ = true;
  return false;
}

// A table b-tree page: a leaf becomes the page rows are read from, an interior page a frame whose
// children are entered in order.
bool TableScan::EnterPage(uint32_t page, const unsigned char* data, Status& status) {
  const uint32_t usable = file_->usable_size();
  if (++pages_entered_ > file_->page_count()) return Fail(status, file_->Corrupt());  // a cycle
  const uint32_t hdr = page == 1 ? 100 : 0;
  const unsigned char type = data[hdr];
  const uint32_t cells = Be16(data + hdr + 3);
  if (type == 0x0d) {
    if (hdr + 8 + 2 * cells > usable) return Fail(status, file_->Corrupt());
    leaf_data_ = data;
    leaf_hdr_ = hdr;
    leaf_cells_ = cells;
    leaf_next_ = 0;
    return true;
  }
  if (type != 0x05 || hdr + 12 + 2 * cells > usable || depth_ >= kMaxDepth) return Fail(status, file_->Corrupt());
  if (stack_.size() <= depth_) stack_.push_back(std::make_unique<Frame>());
  Frame& f = *stack_[depth_];
  f.children.clear();
  f.next = f.first = f.count = 0;
  for (uint32_t i = 0; i < cells; ++i) {
    const uint32_t at = Be16(data + hdr + 12 + 2 * i);
    if (at + 4 > usable) return Fail(status, file_->Corrupt());
    f.children.push_back(Be32(data + at));
  }
  f.children.push_back(Be32(data + hdr + 8));  // the right-most child
  for (uint32_t c : f.children)
    if (c < 2 || c > file_->page_count()) return Fail(status, file_->Corrupt());
  ++depth_;
  return true;
}

// Enters the next child of the deepest frame with one left: true once a leaf is entered.
bool TableScan::NextChild(Status& status) {
  const uint32_t ps = file_->page_size();
  while (depth_ > 0) {
    Frame& f = *stack_[depth_ - 1];
    if (f.next == f.children.size()) {
      --depth_;
      continue;
    }
    const size_t i = f.next++;
    if (i < f.first || i >= f.first + f.count) {
      // Read ahead: as many children as fit the window, consecutive pages in one read.
      const size_t n = std::min(f.children.size() - i, std::max<size_t>(1, kWindowBytes / ps));
      f.window.resize(n * ps);
      for (size_t j = 0; j < n;) {
        size_t run = 1;
        while (j + run < n && f.children[i + j + run] == f.children[i + j + run - 1] + 1) ++run;
        if (!file_->Read(f.children[i + j], static_cast<uint32_t>(run), f.window.data() + j * ps))
          return Fail(status, file_->IoFailure());
        j += run;
      }
      f.first = i;
      f.count = n;
    }
    if (!EnterPage(f.children[i], f.window.data() + (i - f.first) * ps, status)) return false;
    if (leaf_data_) return true;
  }
  done_ = true;
  return false;
}

bool TableScan::Next(Status& status) {
  if (done_) return false;
  while (!leaf_data_ || leaf_next_ == leaf_cells_) {
    leaf_data_ = nullptr;
    if (!NextChild(status)) return false;
  }
  return DecodeCell(status);
}

TableScan::StepKind TableScan::StepKindOf(uint64_t t) {
  switch (t) {
    case 0:
    case 10:
    case 11: return StepKind::kNull;
    case 1: return StepKind::kInt8;
    case 2: return StepKind::kInt16;
    case 3: return StepKind::kInt24;
    case 4: return StepKind::kInt32;
    case 5: return StepKind::kInt48;
    case 6: return StepKind::kInt64;
    case 7: return StepKind::kReal;
    case 8: return StepKind::kZero;
    case 9: return StepKind::kOne;
    default: return (t & 1) ? StepKind::kText : StepKind::kBlob;
  }
}

// A value of a record: big-endian two's-complement integers of 1, 2, 3, 4, 6 or 8 bytes, an IEEE
// double, the constants 0 and 1, or text / blob bytes (sqlite.org/fileformat2.html, "Record Format").
[[gnu::always_inline]] inline void TableScan::DecodeStep(Value& v, StepKind kind, const unsigned char* p,
                                                         uint32_t length) {
  v.type = kInteger;
  switch (kind) {
    case StepKind::kInt8: v.i = static_cast<int8_t>(p[0]); return;
    case StepKind::kInt16: v.i = static_cast<int16_t>(Be16(p)); return;
    case StepKind::kInt24:
      v.i = static_cast<int32_t>(uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8) >> 8;
      return;
    case StepKind::kInt32: v.i = static_cast<int32_t>(Be32(p)); return;
    case StepKind::kInt48: v.i = static_cast<int64_t>((uint64_t{Be16(p)} << 32 | Be32(p + 2)) << 16) >> 16; return;
    case StepKind::kInt64: v.i = static_cast<int64_t>(uint64_t{Be32(p)} << 32 | Be32(p + 4)); return;
    case StepKind::kZero: v.i = 0; return;
    case StepKind::kOne: v.i = 1; return;
    case StepKind::kReal: {
      const uint64_t bits = uint64_t{Be32(p)} << 32 | Be32(p + 4);
      std::memcpy(&v.r, &bits, sizeof bits);
      v.type = v.r != v.r ? kNull : kReal;  // SQLite reads a stored NaN as NULL
      return;
    }
    case StepKind::kText:
    case StepKind::kBlob:
      v.type = kind == StepKind::kText ? kText : kBlob;
      v.p = p;
      v.n = length;
      return;
    case StepKind::kNull: break;
  }
  v.type = kNull;
}

// The leaf's next cell: its record decoded into values_.
bool TableScan::DecodeCell(Status& status) {
  const uint32_t usable = file_->usable_size();
  const unsigned char* page = leaf_data_;
  const unsigned char* page_end = page + usable;
  const uint32_t at = Be16(page + leaf_hdr_ + 8 + 2 * leaf_next_++);
  if (at >= usable) return Fail(status, file_->Corrupt());
  const unsigned char* p = page + at;
  uint64_t size, rowid;
  // A payload larger than the file can hold, or than SQLite's length limit (10^9), is damage.
  if (!Varint(p, page_end, size) || !Varint(p, page_end, rowid) ||
      size > std::min<uint64_t>(1000000000, uint64_t{file_->page_count()} * usable))
    return Fail(status, file_->Corrupt());
  // How much of the payload is on the page (sqlite.org/fileformat2.html, "Cell Payload Overflow Pages").
  const uint64_t max_local = usable - 35;
  const unsigned char* payload = p;
  if (size <= max_local) {
    if (size > static_cast<uint64_t>(page_end - p)) return Fail(status, file_->Corrupt());
  } else {
    const uint64_t min_local = (uint64_t{usable} - 12) * 32 / 255 - 23;
    uint64_t local = min_local + (size - min_local) % (usable - 4);
    if (local > max_local) local = min_local;
    if (local + 4 > static_cast<uint64_t>(page_end - p)) return Fail(status, file_->Corrupt());
    payload_.resize(size);
    std::memcpy(payload_.data(), p, local);
    uint32_t next = Be32(p + local);
    std::vector<unsigned char>& over = overflow_page_;
    over.resize(file_->page_size());
    uint64_t filled = local, hops = 0;
    while (filled < size) {
      if (next < 2 || next > file_->page_count() || ++hops > file_->page_count()) return Fail(status, file_->Corrupt());
      if (!file_->Read(next, 1, over.data())) return Fail(status, file_->IoFailure());
      const uint64_t chunk = std::min<uint64_t>(size - filled, usable - 4);
      std::memcpy(payload_.data() + filled, over.data() + 4, chunk);
      filled += chunk;
      next = Be32(over.data());
    }
    payload = payload_.data();
  }

  // The record: a header of serial types, then the values. Rows of one table mostly repeat the
  // previous row's header (the same types, so the same offsets): then its plan is reused.
  if (const Plan* plan = FindPlan(payload, size)) {
    Value* values = values_.data();
    for (const Step& st : plan->steps) DecodeStep(values[st.slot], st.kind, payload + st.offset, st.length);
  } else if (!DecodeRecord(payload, size)) {
    return Fail(status, file_->Corrupt());
  }
  if (rowid_slot_ >= 0) {  // SQLite reads a rowid alias from the cell, whatever the record holds
    values_[static_cast<size_t>(rowid_slot_)].type = kInteger;
    values_[static_cast<size_t>(rowid_slot_)].i = static_cast<int64_t>(rowid);
  }
  if (any_real_affinity_)
    for (size_t slot = 0; slot < values_.size(); ++slot)
      if (real_affinity_[slot] && values_[slot].type == kInteger) {
        values_[slot].type = kReal;
        values_[slot].r = static_cast<double>(values_[slot].i);
      }
  return true;
}

// The plan of a record whose header starts with a plan's key: the last one used, else any kept.
const TableScan::Plan* TableScan::FindPlan(const unsigned char* payload, uint64_t size) {
  auto fits = [&](const Plan& p) {
    return (p.exact ? size == p.end : p.end <= size) && !p.key.empty() && p.key.size() <= size &&
           std::memcmp(payload, p.key.data(), p.key.size()) == 0;
  };
  if (last_plan_ < plans_.size() && fits(plans_[last_plan_])) return &plans_[last_plan_];
  for (size_t i = 0; i < plans_.size(); ++i)
    if (i != last_plan_ && fits(plans_[i])) {
      last_plan_ = i;
      return &plans_[i];
    }
  return nullptr;
}

// Reads the header up to the last wanted column, decodes the wanted values, and keeps the plan
// (the header bytes read, and where each wanted value is) for the rows after it.
bool TableScan::DecodeRecord(const unsigned char* payload, uint64_t size) {
  const unsigned char* end = payload + size;
  const unsigned char* h = payload;
  uint64_t header_size;
  // As SQLite's OP_Column: a header larger than 98,307 bytes or than the record is damage; one
  // shorter than its own size field holds no column (every column reads NULL).
  if (!Varint(h, end, header_size) || header_size > 98307 || header_size > size) return false;
  const unsigned char* header_end = std::max(payload + header_size, h);
  const bool entries = header_end > h;
  const unsigned char* body = header_end;
  // The plan replaces the oldest kept one.
  size_t which = plans_.size();
  if (which < kPlans) {
    plans_.emplace_back();
  } else {
    which = next_plan_;
    next_plan_ = (next_plan_ + 1) % kPlans;
  }
  Plan& plan = plans_[which];
  plan.key.clear();  // matches nothing until the record is read
  plan.steps.clear();
  plan.end = static_cast<uint64_t>(body - payload);
  const int* want = want_.data();
  const size_t wanted = want_.size();
  Value* values = values_.data();
  size_t k = 0;
  for (; k < wanted && h < header_end; ++k) {
    uint64_t t;
    if (!Varint(h, header_end, t)) return false;
    const uint64_t len = t < 128 ? kSerialLength[t] : (t - 12) / 2;
    if (len > static_cast<uint64_t>(end - body)) return false;
    if (const int slot = want[k]; slot >= 0) {
      const StepKind kind = StepKindOf(t);
      DecodeStep(values[slot], kind, body, static_cast<uint32_t>(len));
      plan.steps.push_back({slot, static_cast<uint32_t>(body - payload), static_cast<uint32_t>(len), kind});
    }
    body += len;
  }
  // The whole header read: its values must fill the record exactly (SQLite: damage otherwise;
  // it checks only a header with entries).
  plan.exact = entries && h >= header_end;
  if (plan.exact && body != end) return false;
  plan.end = static_cast<uint64_t>(body - payload);
  for (; k < wanted; ++k)  // a record shorter than the table (columns added later): NULL
    if (want[k] >= 0) {
      values[want[k]].type = kNull;
      plan.steps.push_back({want[k], 0, 0, StepKind::kNull});
    }
  plan.key.assign(payload, h);
  last_plan_ = which;
  return true;
}

int64_t TableScan::AsIntSlow(const Value& v) {
  switch (v.type) {
    case kInteger: return v.i;
    case kReal: {
      // sqlite3VdbeIntValue: clamped to int64 (2^63 is the first double out of range).
      if (v.r <= -9223372036854775808.0) return std::numeric_limits<int64_t>::min();
      if (v.r >= 9223372036854775808.0) return std::numeric_limits<int64_t>::max();
      return static_cast<int64_t>(v.r);
    }
    case kText:
    case kBlob: return Atoi64(v.p, v.n);
    default: return 0;
  }
}

}  // namespace tg::internal
