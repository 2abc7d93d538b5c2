// JsonWriter must write exactly what nlohmann::json::dump(indent, ' ', false, replace) writes for
// the same document: the report file is compared byte for byte with the tree's dump.
#include "reports/report/json_writer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace tg::internal {
namespace {

using nlohmann::json;

std::string Dump(const json& v, int indent = -1) { return v.dump(indent, ' ', false, json::error_handler_t::replace); }

std::string Written(const json& v, int indent = 2) {
  JsonWriter w(indent);
  w.Value(v);
  return w.TakeText();
}

// Every value formatted, one DoubleTexts for all of them and one per value, against dump().
void ExpectSameDoubles(const std::vector<double>& values) {
  const DoubleTexts all(values);
  ASSERT_EQ(all.size(), values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    const std::string expected = json(values[i]).dump();
    ASSERT_EQ(all[i], expected) << "value " << i;
    const std::vector<double> one{values[i]};
    ASSERT_EQ(DoubleTexts(one)[0], expected);
  }
}

double FromBits(uint64_t bits) {
  double v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

TEST(JsonWriter, DoublesAsNlohmannWritesThem) {
  using lim = std::numeric_limits<double>;
  std::vector<double> edge = {0.0,
                              -0.0,
                              1e-7,
                              -1e-7,
                              1e-5,
                              1e-4,
                              1e-3,
                              0.1,
                              0.2,
                              0.3,
                              1.0 / 3,
                              2.0 / 3,
                              1.5,
                              1e21,
                              1e22,
                              1e300,
                              -1e300,
                              1e308,
                              lim::max(),
                              lim::lowest(),
                              lim::min(),
                              lim::denorm_min(),
                              -lim::denorm_min(),
                              FromBits(0x000FFFFFFFFFFFFF),
                              FromBits(0x0000000000000003),
                              lim::epsilon(),
                              1.0,
                              -1.0,
                              100.0,
                              12345.0,
                              1e15,
                              1e16,
                              1e17,
                              9007199254740992.0,
                              9007199254740993.0,
                              123456789012345680.0,
                              0.000123456,
                              1.7976931348623157e308,
                              5e-324,
                              91925.255717,
                              91925.25571699999,
                              lim::quiet_NaN(),
                              lim::infinity(),
                              -lim::infinity()};
  for (int e = -30; e <= 30; ++e) {
    edge.push_back(std::pow(10.0, e));
    edge.push_back(-3.0 * std::pow(10.0, e));
  }
  ExpectSameDoubles(edge);

  std::mt19937_64 rng(20240611);
  std::vector<double> bits, ms, integral;
  while (bits.size() < 200'000) bits.push_back(FromBits(rng()));  // NaNs, infinities and denormals too
  for (int i = 0; i < 200'000; ++i) ms.push_back(static_cast<double>(rng() % 1'000'000'000'000) / 1e6);
  for (int i = 0; i < 50'000; ++i) integral.push_back(static_cast<double>(static_cast<int64_t>(rng()) >> (i % 64)));
  ExpectSameDoubles(bits);
  ExpectSameDoubles(ms);
  ExpectSameDoubles(integral);
  ExpectSameDoubles({});
}

TEST(JsonWriter, IntegersAsNlohmannWritesThem) {
  std::vector<int64_t> ints = {
      0, 1, -1, 9, 10, -10, std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()};
  std::vector<uint64_t> uints = {0, 1, 10, std::numeric_limits<uint64_t>::max(), 1ull << 63};
  std::mt19937_64 rng(7);
  for (int i = 0; i < 10'000; ++i) {
    ints.push_back(static_cast<int64_t>(rng()) >> (i % 64));
    uints.push_back(rng() >> (i % 64));
  }
  for (int64_t v : ints) {
    JsonWriter w;
    w.Int(v);
    ASSERT_EQ(w.TakeText(), json(v).dump());
  }
  for (uint64_t v : uints) {
    JsonWriter w;
    w.Uint(v);
    ASSERT_EQ(w.TakeText(), json(v).dump());
  }
}

TEST(JsonWriter, StringsAndKeysAsNlohmannEscapesThem) {
  std::vector<std::string> strings = {"",
                                      "plain",
                                      "ProfilerStep#12",
                                      "a\"quote",
                                      "back\\slash",
                                      "tab\there",
                                      "nl\n",
                                      std::string("nul\0x", 5),
                                      "\x01\x1f",
                                      "del\x7f",
                                      "caf\xc3\xa9",
                                      "\xe2\x82\xac euro",
                                      "\xf0\x9f\x98\x80",
                                      "bad \xff byte",
                                      "cut \xc3",
                                      "cut \xe2\x82",
                                      "\xc3\x28",
                                      "\xed\xa0\x80 surrogate",
                                      "\xf4\x90\x80\x80",
                                      "\xc0\xaf overlong",
                                      "mixed \"\\\t\xff\xc3\xa9"};
  std::mt19937 rng(3);
  for (int i = 0; i < 2'000; ++i) {
    std::string s(rng() % 12, ' ');
    for (char& c : s) c = static_cast<char>(rng() % 256);
    strings.push_back(s);
  }
  for (const std::string& s : strings) {
    JsonWriter w;
    w.String(s);
    ASSERT_EQ(w.TakeText(), Dump(json(s))) << s;
    json object = {{s, 1}};
    ASSERT_EQ(Written(object), Dump(object, 2)) << s;
  }
}

// Random documents of every value type, nested up to four deep, with empty containers.
json RandomValue(std::mt19937_64& rng, int depth) {
  switch (rng() % (depth < 4 ? 9 : 7)) {
    case 0: return nullptr;
    case 1: return rng() % 2 == 0;
    case 2: return static_cast<int64_t>(rng()) >> (rng() % 64);
    case 3: return rng() >> (rng() % 64);
    case 4: return static_cast<double>(rng() % 100'000'000) / 1e3;
    case 5: return FromBits(rng());
    case 6: return std::string(rng() % 5, static_cast<char>('a' + rng() % 26)) + (rng() % 4 ? "" : "\"\xff\n");
    case 7: {
      json a = json::array();
      for (size_t n = rng() % 4; n > 0; --n) a.push_back(RandomValue(rng, depth + 1));
      return a;
    }
    default: {
      json o = json::object();
      for (size_t n = rng() % 5; n > 0; --n) o["k" + std::to_string(rng() % 20)] = RandomValue(rng, depth + 1);
      return o;
    }
  }
}

TEST(JsonWriter, DocumentsAsDumpLaysThemOut) {
  std::mt19937_64 rng(11);
  for (int i = 0; i < 2'000; ++i) {
    json doc = RandomValue(rng, 0);
    if (i % 2 == 0)
      doc = {{"first", RandomValue(rng, 1)}, {"second", RandomValue(rng, 1)}, {"third", RandomValue(rng, 1)}};
    for (int indent : {0, 2, 4}) ASSERT_EQ(Written(doc, indent), Dump(doc, indent)) << Dump(doc);
  }
  for (const json& doc : {json::object(), json::array(), json{{"a", json::array()}, {"b", json::object()}},
                          json::array({json::array(), json::object(), 1.0})})
    EXPECT_EQ(Written(doc), Dump(doc, 2));
}

// Members and elements written one at a time, the array's elements split between a writer and
// its forks: the pieces in order are the tree's dump.
TEST(JsonWriter, ElementsWrittenByForksJoinInOrder) {
  const json doc = {{"a", 1}, {"rows", {{{"x", 1.5}}, {{"x", 2}}, "three", nullptr, 5}}, {"z", "end"}};
  for (size_t split = 0; split <= 5; ++split) {
    JsonWriter w;
    w.BeginObject();
    w.Key("a");
    w.Value(doc["a"]);
    w.Key("rows");
    w.BeginArray();
    JsonWriter fork = w.Fork(split);
    const std::string head = w.TakeText();
    for (size_t i = 0; i < split; ++i) fork.Value(doc["rows"][i]);
    for (size_t i = split; i < 5; ++i) w.Value(doc["rows"][i]);
    w.EndArray();
    w.Key("z");
    w.String("end");
    w.EndObject();
    EXPECT_EQ(head + fork.TakeText() + w.TakeText(), Dump(doc, 2)) << split;
  }
  JsonWriter empty;
  empty.BeginArray();
  JsonWriter none = empty.Fork(0);
  empty.EndArray();
  EXPECT_EQ(empty.TakeText() + none.TakeText(), "[]");
}

}  // namespace
}  // namespace tg::internal
