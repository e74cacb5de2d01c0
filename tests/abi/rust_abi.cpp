#include "rust_abi.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <sstream>

namespace gw::abi_test {
namespace {

// ---------------------------------------------------------------------------------------------
// Tokens

struct Token {
  enum class Kind { kIdent, kNumber, kString, kPunct, kEnd };
  Kind kind = Kind::kEnd;
  std::string text;
  int line = 0;
};

bool IsIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

std::vector<Token> Tokenize(std::string_view s) {
  std::vector<Token> out;
  int line = 1;
  std::size_t i = 0;
  auto fail = [&](const std::string& what) {
    throw ParseError("bindings.rs line " + std::to_string(line) + ": " + what);
  };
  while (i < s.size()) {
    const char c = s[i];
    if (c == '\n') {
      ++line;
      ++i;
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (s.compare(i, 2, "//") == 0) {
      while (i < s.size() && s[i] != '\n') ++i;
    } else if (s.compare(i, 2, "/*") == 0) {
      const std::size_t end = s.find("*/", i + 2);
      if (end == std::string_view::npos) fail("unterminated comment");
      line += static_cast<int>(
          std::count(s.begin() + static_cast<std::ptrdiff_t>(i), s.begin() + static_cast<std::ptrdiff_t>(end), '\n'));
      i = end + 2;
    } else if (c == '"' || (c == 'b' && i + 1 < s.size() && s[i + 1] == '"') || c == '\'') {
      const char quote = c == '\'' ? '\'' : '"';
      const int start_line = line;
      std::size_t j = i + (c == 'b' ? 2 : 1);
      while (j < s.size() && s[j] != quote) {
        if (s[j] == '\\') ++j;
        if (j < s.size() && s[j] == '\n') ++line;
        ++j;
      }
      if (j >= s.size()) fail("unterminated string");
      out.push_back({Token::Kind::kString, std::string(s.substr(i, j + 1 - i)), start_line});
      i = j + 1;
    } else if (IsIdentStart(c)) {
      std::size_t j = i;
      while (j < s.size() && IsIdentChar(s[j])) ++j;
      out.push_back({Token::Kind::kIdent, std::string(s.substr(i, j - i)), line});
      i = j;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      std::size_t j = i;
      while (j < s.size() && IsIdentChar(s[j])) ++j;
      out.push_back({Token::Kind::kNumber, std::string(s.substr(i, j - i)), line});
      i = j;
    } else if (s.compare(i, 2, "::") == 0 || s.compare(i, 2, "->") == 0) {
      out.push_back({Token::Kind::kPunct, std::string(s.substr(i, 2)), line});
      i += 2;
    } else {
      out.push_back({Token::Kind::kPunct, std::string(1, c), line});
      ++i;
    }
  }
  out.push_back({Token::Kind::kEnd, "", line});
  return out;
}

// "16usize", "0x1F", "4294967295", "1_000u32" -> value; nullopt if not an integer literal.
std::optional<unsigned long long> ParseIntLiteral(std::string text) {
  text.erase(std::remove(text.begin(), text.end(), '_'), text.end());
  int base = 10;
  std::size_t pos = 0;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    base = 16;
    pos = 2;
  } else if (text.size() > 2 && text[0] == '0' && text[1] == 'o') {
    base = 8;
    pos = 2;
  } else if (text.size() > 2 && text[0] == '0' && text[1] == 'b') {
    base = 2;
    pos = 2;
  }
  // Strip a type suffix (u8..u128, i8..i128, usize, isize).
  for (const char* suffix : {"usize", "isize", "u128", "i128", "u64", "i64", "u32", "i32", "u16", "i16", "u8", "i8"}) {
    const std::string_view sv(suffix);
    if (text.size() >= pos + sv.size() + 1 && text.compare(text.size() - sv.size(), sv.size(), sv) == 0) {
      text.resize(text.size() - sv.size());
      break;
    }
  }
  if (pos >= text.size()) return std::nullopt;
  unsigned long long v = 0;
  for (std::size_t k = pos; k < text.size(); ++k) {
    const char ch = static_cast<char>(std::tolower(static_cast<unsigned char>(text[k])));
    int digit = -1;
    if (ch >= '0' && ch <= '9') digit = ch - '0';
    if (ch >= 'a' && ch <= 'f') digit = ch - 'a' + 10;
    if (digit < 0 || digit >= base) return std::nullopt;
    v = v * static_cast<unsigned long long>(base) + static_cast<unsigned long long>(digit);
  }
  return v;
}

// ---------------------------------------------------------------------------------------------
// Builtins: std::os::raw types are by definition the platform's C types, so their sizes are
// taken from this compiler (on x86-64 Linux: c_uint 4, c_ulong 8, c_ulonglong 8, pointers 8).

struct Builtin {
  const char* c_name;
  std::size_t size, align;
  bool is_signed;
};

template <typename T>
constexpr Builtin Make(const char* c_name) {
  return {c_name, sizeof(T), alignof(T), static_cast<T>(-1) < static_cast<T>(0)};
}

const std::map<std::string, Builtin>& Builtins() {
  static const std::map<std::string, Builtin> table = {
      {"c_char", Make<char>("char")},
      {"c_schar", Make<signed char>("signed char")},
      {"c_uchar", Make<unsigned char>("unsigned char")},
      {"c_short", Make<short>("short")},
      {"c_ushort", Make<unsigned short>("unsigned short")},
      {"c_int", Make<int>("int")},
      {"c_uint", Make<unsigned int>("unsigned int")},
      {"c_long", Make<long>("long")},
      {"c_ulong", Make<unsigned long>("unsigned long")},
      {"c_longlong", Make<long long>("long long")},
      {"c_ulonglong", Make<unsigned long long>("unsigned long long")},
      {"c_float", Make<float>("float")},
      {"c_double", Make<double>("double")},
      {"f32", Make<float>("float")},
      {"f64", Make<double>("double")},
      {"i8", Make<std::int8_t>("signed char")},
      {"u8", Make<std::uint8_t>("unsigned char")},
      {"i16", Make<std::int16_t>("short")},
      {"u16", Make<std::uint16_t>("unsigned short")},
      {"i32", Make<std::int32_t>("int")},
      {"u32", Make<std::uint32_t>("unsigned int")},
      {"i64", Make<std::int64_t>(sizeof(long) == 8 ? "long" : "long long")},
      {"u64", Make<std::uint64_t>(sizeof(long) == 8 ? "unsigned long" : "unsigned long long")},
      {"isize", Make<std::ptrdiff_t>("long")},
      {"usize", Make<std::size_t>("unsigned long")},
      {"c_void", {"void", 0, 1, false}},
  };
  return table;
}

const Builtin* FindBuiltin(const std::string& rust_name) {
  const auto& table = Builtins();
  const auto it = table.find(rust_name);
  return it == table.end() ? nullptr : &it->second;
}

bool IsCBuiltinName(const std::string& c_name) {
  for (const auto& [rust, b] : Builtins()) {
    if (c_name == b.c_name) return true;
  }
  return false;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Parser

class Parser {
 public:
  Parser(std::vector<Token> tokens, RustBindings& out) : t_(std::move(tokens)), out_(out) {}

  void ParseFile() {
    ParseItems("");
    if (Peek().kind != Token::Kind::kEnd) Fail("unexpected '" + Peek().text + "'");
  }

 private:
  const Token& Peek(std::size_t ahead = 0) const { return t_[std::min(pos_ + ahead, t_.size() - 1)]; }
  const Token& Next() {
    const Token& tok = Peek();
    if (pos_ < t_.size() - 1) ++pos_;
    return tok;
  }
  bool Is(std::string_view text, std::size_t ahead = 0) const {
    const Token& tok = Peek(ahead);
    return tok.kind != Token::Kind::kString && tok.kind != Token::Kind::kEnd && tok.text == text;
  }
  [[noreturn]] void Fail(const std::string& what) const {
    throw ParseError("bindings.rs line " + std::to_string(Peek().line) + ": " + what);
  }
  void Expect(std::string_view text) {
    if (!Is(text)) Fail("expected '" + std::string(text) + "', found '" + Peek().text + "'");
    Next();
  }
  std::string ExpectIdent() {
    if (Peek().kind != Token::Kind::kIdent) Fail("expected a name, found '" + Peek().text + "'");
    return Next().text;
  }

  // Skips a balanced group starting at an opening bracket.
  void SkipBalanced() {
    const std::string open = Next().text;
    const std::string close = open == "(" ? ")" : open == "[" ? "]" : open == "{" ? "}" : ">";
    int depth = 1;
    while (depth > 0) {
      if (Peek().kind == Token::Kind::kEnd) Fail("unbalanced '" + open + "'");
      const Token& tok = Next();
      if (tok.kind == Token::Kind::kString) continue;
      if (tok.text == open) ++depth;
      if (tok.text == close) --depth;
    }
  }
  void SkipAttributes() {
    while (Is("#")) {
      Next();
      if (Is("!")) Next();
      if (!Is("[")) Fail("expected '[' after '#'");
      SkipBalanced();
    }
  }
  void SkipVisibility() {
    if (Is("pub")) {
      Next();
      if (Is("(")) SkipBalanced();
    }
  }
  // Skips an item we do not read: up to ';' or through a '{...}' block at depth 0.
  void SkipItem() {
    while (true) {
      if (Peek().kind == Token::Kind::kEnd) Fail("unterminated item");
      if (Is(";")) {
        Next();
        return;
      }
      if (Is("{")) {
        SkipBalanced();
        return;
      }
      if (Is("(") || Is("[")) {
        SkipBalanced();
        continue;
      }
      Next();
    }
  }

  void ParseItems(const std::string& module) {
    while (Peek().kind != Token::Kind::kEnd && !Is("}")) {
      SkipAttributes();
      SkipVisibility();
      if (Is("const")) {
        ParseConst(module);
      } else if (Is("type")) {
        ParseTypeAlias();
      } else if (Is("use")) {
        ParseUse();
      } else if (Is("struct") || Is("union")) {
        ParseRecord();
      } else if (Is("mod")) {
        Next();
        const std::string name = ExpectIdent();
        if (Is(";")) {
          Next();
          continue;
        }
        Expect("{");
        ParseItems(module.empty() ? name : module + "::" + name);
        Expect("}");
      } else {
        SkipItem();
      }
    }
  }

  void ParseConst(const std::string& module) {
    Expect("const");
    RustConst c;
    c.line = Peek().line;
    c.name = ExpectIdent();
    c.module = module;
    Expect(":");
    while (!Is("=")) {
      if (Peek().kind == Token::Kind::kEnd) Fail("unterminated const");
      c.type_text += Next().text;
    }
    Expect("=");
    std::vector<Token> value;
    while (!Is(";")) {
      if (Peek().kind == Token::Kind::kEnd) Fail("unterminated const");
      value.push_back(Next());
    }
    Expect(";");
    const bool negative = value.size() == 2 && value[0].text == "-";
    if ((value.size() == 1 || negative) && value.back().kind == Token::Kind::kNumber) {
      if (const auto v = ParseIntLiteral(value.back().text)) {
        c.is_integer = true;
        c.value = static_cast<long long>(negative ? 0ULL - *v : *v);
      }
    }
    out_.constants_.push_back(std::move(c));
  }

  void ParseTypeAlias() {
    Expect("type");
    const std::string name = ExpectIdent();
    if (Is("<")) SkipBalanced();
    Expect("=");
    RustTypePtr target = ParseType();
    Expect(";");
    out_.aliases_[name] = std::move(target);
  }

  void ParseUse() {
    Expect("use");
    // Only `use self::X as Y;` is an alias; `use std::os::raw;` and the like are skipped.
    if (Is("self") && Is("::", 1) && Peek(2).kind == Token::Kind::kIdent && Is("as", 3) &&
        Peek(4).kind == Token::Kind::kIdent && Is(";", 5)) {
      Next();
      Next();
      auto target = std::make_shared<RustType>();
      target->name = Next().text;
      target->text = target->name;
      Next();
      const std::string alias = Next().text;
      Next();
      out_.aliases_[alias] = std::move(target);
      return;
    }
    SkipItem();
  }

  void ParseRecord() {
    RustRecord record;
    record.is_union = Next().text == "union";
    record.name = ExpectIdent();
    if (Is("<")) SkipBalanced();
    if (Is(";")) {  // unit struct
      Next();
      out_.records_[record.name] = std::move(record);
      return;
    }
    if (Is("(")) {  // tuple struct: not part of the C ABI surface we read
      SkipItem();
      return;
    }
    Expect("{");
    while (!Is("}")) {
      SkipAttributes();
      SkipVisibility();
      RustField field;
      field.name = ExpectIdent();
      Expect(":");
      field.type = ParseType();
      if (!Is("}")) Expect(",");
      record.fields.push_back(std::move(field));
    }
    Expect("}");
    if (record.name == "NvmlLib") {
      // The function table: `pub nvmlFoo: Result<unsafe extern "C" fn(..) -> R, Error>`.
      for (const RustField& f : record.fields) {
        const RustType& t = *f.type;
        if (t.kind != RustType::Kind::kNamed || t.name != "Result" || t.args.empty() ||
            t.args[0]->kind != RustType::Kind::kFnPtr) {
          continue;  // __library
        }
        RustFunction fn;
        fn.name = f.name;
        fn.params = t.args[0]->params;
        fn.ret = t.args[0]->ret;
        out_.functions_[fn.name] = std::move(fn);
      }
      return;
    }
    out_.records_[record.name] = std::move(record);
  }

  RustTypePtr ParseType() {
    auto type = std::make_shared<RustType>();
    const std::size_t start = pos_;
    if (Is("*")) {
      Next();
      type->kind = RustType::Kind::kPointer;
      if (Is("const")) {
        type->pointee_const = true;
      } else if (!Is("mut")) {
        Fail("expected 'mut' or 'const' after '*'");
      }
      Next();
      type->inner = ParseType();
    } else if (Is("&")) {
      Next();
      type->kind = RustType::Kind::kPointer;
      type->pointee_const = true;
      if (Is("mut")) {
        Next();
        type->pointee_const = false;
      }
      type->inner = ParseType();
    } else if (Is("[")) {
      Next();
      type->kind = RustType::Kind::kArray;
      type->inner = ParseType();
      Expect(";");
      if (Peek().kind != Token::Kind::kNumber) Fail("expected an array length");
      const auto n = ParseIntLiteral(Next().text);
      if (!n) Fail("bad array length");
      type->count = *n;
      Expect("]");
    } else if (Is("unsafe") || Is("extern") || Is("fn")) {
      type->kind = RustType::Kind::kFnPtr;
      if (Is("unsafe")) Next();
      if (Is("extern")) {
        Next();
        if (Peek().kind == Token::Kind::kString) Next();
      }
      Expect("fn");
      Expect("(");
      while (!Is(")")) {
        RustParam p;
        if (Peek().kind == Token::Kind::kIdent && Is(":", 1)) {
          p.name = Next().text;
          Next();
        }
        p.type = ParseType();
        type->params.push_back(std::move(p));
        if (!Is(")")) Expect(",");
      }
      Expect(")");
      if (Is("->")) {
        Next();
        type->ret = ParseType();
      }
    } else if (Is("(") && Is(")", 1)) {
      Next();
      Next();
      type->name = "()";
    } else {
      if (Is("::")) Next();
      type->name = ExpectIdent();
      while (Is("::")) {
        Next();
        type->name = ExpectIdent();
      }
      if (Is("<")) {
        Next();
        while (!Is(">")) {
          type->args.push_back(ParseType());
          if (!Is(">")) Expect(",");
        }
        Expect(">");
      }
    }
    for (std::size_t k = start; k < pos_; ++k) {
      const std::string& piece = t_[k].text;
      if (!type->text.empty() && (IsIdentChar(piece[0]) && IsIdentChar(type->text.back()))) type->text += ' ';
      type->text += piece;
    }
    return type;
  }

  std::vector<Token> t_;
  std::size_t pos_ = 0;
  RustBindings& out_;
};

RustBindings RustBindings::Parse(std::string_view text) {
  RustBindings b;
  Parser(Tokenize(text), b).ParseFile();
  for (std::size_t i = 0; i < b.constants_.size(); ++i) {
    const RustConst& c = b.constants_[i];
    b.const_index_.emplace(c.name, i);
    // Enum form: `pub const nvmlReturn_enum_NVML_SUCCESS: nvmlReturn_enum = 0;` with
    // `pub type nvmlReturn_enum = raw::c_uint;`.
    const std::string prefix = c.type_text + "_";
    if (b.aliases_.count(c.type_text) != 0 && c.name.size() > prefix.size() &&
        c.name.compare(0, prefix.size(), prefix) == 0) {
      b.const_index_.emplace(c.name.substr(prefix.size()), i);
    }
  }
  return b;
}

std::vector<const RustConst*> RustBindings::FindConstant(const std::string& c_name) const {
  std::vector<const RustConst*> found;
  const auto [lo, hi] = const_index_.equal_range(c_name);
  for (auto it = lo; it != hi; ++it) found.push_back(&constants_[it->second]);
  return found;
}

// ---------------------------------------------------------------------------------------------
// Layout

namespace {
constexpr int kMaxDepth = 32;
std::size_t RoundUp(std::size_t v, std::size_t a) { return a == 0 ? v : (v + a - 1) / a * a; }
}  // namespace

std::optional<ScalarInfo> RustBindings::InfoOfName(const std::string& name, std::string* error) const {
  if (const Builtin* b = FindBuiltin(name)) return ScalarInfo{b->size, b->align, b->is_signed, false};
  if (records_.count(name) != 0) {
    const auto layout = LayoutOfRecord(name, error);
    if (!layout) return std::nullopt;
    return ScalarInfo{layout->size, layout->align, false, false};
  }
  const auto alias = aliases_.find(name);
  if (alias != aliases_.end()) return InfoOf(*alias->second, error);
  if (error) *error = "unknown type '" + name + "'";
  return std::nullopt;
}

std::optional<ScalarInfo> RustBindings::InfoOf(const RustType& type, std::string* error) const {
  thread_local int depth = 0;
  if (depth > kMaxDepth) {
    if (error) *error = "type aliases nest too deeply at '" + type.text + "'";
    return std::nullopt;
  }
  struct Guard {
    Guard() { ++depth; }
    ~Guard() { --depth; }
  } guard;
  switch (type.kind) {
    case RustType::Kind::kPointer:
    case RustType::Kind::kFnPtr:
      return ScalarInfo{sizeof(void*), alignof(void*), false, true};
    case RustType::Kind::kArray: {
      const auto elem = InfoOf(*type.inner, error);
      if (!elem) return std::nullopt;
      return ScalarInfo{elem->size * type.count, elem->align, false, false};
    }
    case RustType::Kind::kNamed:
      break;
  }
  if (type.name == "Option" && type.args.size() == 1 && type.args[0]->kind == RustType::Kind::kFnPtr) {
    return ScalarInfo{sizeof(void*), alignof(void*), false, true};  // nullable function pointer
  }
  return InfoOfName(type.name, error);
}

std::optional<RecordLayout> RustBindings::LayoutOfRecord(const std::string& name, std::string* error) const {
  std::string resolved = name;
  for (int i = 0; records_.count(resolved) == 0; ++i) {
    const auto alias = aliases_.find(resolved);
    if (i > kMaxDepth || alias == aliases_.end() || alias->second->kind != RustType::Kind::kNamed) {
      if (error) *error = "no struct or union '" + name + "' in bindings.rs";
      return std::nullopt;
    }
    resolved = alias->second->name;
  }
  const RustRecord& record = records_.at(resolved);
  RecordLayout layout;
  layout.rust_name = record.name;
  layout.is_union = record.is_union;
  layout.align = 1;
  std::size_t offset = 0;
  for (const RustField& f : record.fields) {
    std::string field_error;
    const auto info = InfoOf(*f.type, &field_error);
    if (!info) {
      if (error) *error = record.name + "." + f.name + ": " + field_error;
      return std::nullopt;
    }
    FieldLayout fl{f.name, 0, info->size, info->align};
    if (record.is_union) {
      offset = std::max(offset, info->size);
    } else {
      fl.offset = RoundUp(offset, info->align);
      offset = fl.offset + info->size;
    }
    layout.align = std::max(layout.align, info->align);
    layout.fields.push_back(std::move(fl));
  }
  layout.size = RoundUp(offset, layout.align);
  return layout;
}

// ---------------------------------------------------------------------------------------------
// C spelling

std::string ToString(const CType& type) {
  std::string s;
  for (std::size_t i = 0; i < type.size(); ++i) {
    if (i == 0) {
      s = (type[0].is_const ? "const " : "") + type[0].name;
    } else {
      s += type[i].is_const ? " * const" : " *";
    }
  }
  return s;
}

CType RustBindings::ToC(const RustType& type) const {
  switch (type.kind) {
    case RustType::Kind::kPointer: {
      CType c = ToC(*type.inner);
      c.back().is_const = type.pointee_const;
      c.push_back({"*", false});
      return c;
    }
    case RustType::Kind::kArray: {
      CType c = ToC(*type.inner);  // arrays do not occur as parameters; spell as element[N]
      c.back().name += "[" + std::to_string(type.count) + "]";
      return c;
    }
    case RustType::Kind::kFnPtr:
      return {{"fn(" + type.text + ")", false}};
    case RustType::Kind::kNamed:
      break;
  }
  if (type.name == "()") return {{"void", false}};
  if (const Builtin* b = FindBuiltin(type.name)) return {{b->c_name, false}};
  return {{type.name, false}};
}

CType RustBindings::Expand(CType type) const {
  for (int i = 0; i <= kMaxDepth && !type.empty(); ++i) {
    const auto alias = aliases_.find(type[0].name);
    if (alias == aliases_.end()) break;
    CType target = ToC(*alias->second);
    target.back().is_const = target.back().is_const || type[0].is_const;
    target.insert(target.end(), type.begin() + 1, type.end());
    type = std::move(target);
  }
  return type;
}

std::vector<std::string> RustBindings::AliasChain(const std::string& name) const {
  std::vector<std::string> chain{name};
  for (int i = 0; i <= kMaxDepth; ++i) {
    const auto alias = aliases_.find(chain.back());
    if (alias == aliases_.end() || alias->second->kind != RustType::Kind::kNamed ||
        FindBuiltin(alias->second->name) != nullptr) {
      break;
    }
    chain.push_back(alias->second->name);
  }
  return chain;
}

namespace {

std::vector<std::string> CWords(std::string_view text) {
  std::vector<std::string> words;
  std::size_t i = 0;
  while (i < text.size()) {
    if (IsIdentChar(text[i])) {
      std::size_t j = i;
      while (j < text.size() && IsIdentChar(text[j])) ++j;
      words.emplace_back(text.substr(i, j - i));
      i = j;
    } else if (text[i] == '*' || text[i] == '[' || text[i] == ']') {
      words.emplace_back(1, text[i]);
      ++i;
    } else {
      ++i;
    }
  }
  return words;
}

const std::set<std::string>& CTypeKeywords() {
  static const std::set<std::string> k = {"unsigned", "signed", "int",   "long",     "short",  "char",  "double",
                                          "float",    "void",   "const", "volatile", "struct", "union", "enum"};
  return k;
}

std::string CanonicalBase(const std::vector<std::string>& words) {
  int longs = 0;
  bool is_unsigned = false, is_signed = false, has_char = false, has_short = false, has_int = false;
  std::string other;
  for (const std::string& w : words) {
    if (w == "long") {
      ++longs;
    } else if (w == "unsigned") {
      is_unsigned = true;
    } else if (w == "signed") {
      is_signed = true;
    } else if (w == "char") {
      has_char = true;
    } else if (w == "short") {
      has_short = true;
    } else if (w == "int") {
      has_int = true;
    } else if (w == "struct" || w == "union" || w == "enum") {
      continue;
    } else {
      other = w;  // double, float, void or a type name
    }
  }
  const std::string u = is_unsigned ? "unsigned " : "";
  if (has_char) return is_unsigned ? "unsigned char" : is_signed ? "signed char" : "char";
  if (has_short) return u + "short";
  if (longs >= 2) return u + "long long";
  if (longs == 1 && other.empty()) return u + "long";
  if (has_int || is_unsigned || is_signed) return u + "int";
  return other;
}

}  // namespace

CType ParseCType(std::string_view text, bool drop_top_const) {
  std::vector<std::string> words = CWords(text);
  // A trailing identifier after a complete type is the parameter name.
  if (words.size() >= 2 && IsIdentStart(words.back()[0]) && CTypeKeywords().count(words.back()) == 0) {
    bool type_before = false;
    for (std::size_t k = 0; k + 1 < words.size(); ++k) {
      if (words[k] != "const" && words[k] != "volatile" && words[k] != "*") type_before = true;
    }
    if (type_before) words.pop_back();
  }
  CType type;
  std::vector<std::string> base_words;
  bool base_const = false;
  std::size_t k = 0;
  for (; k < words.size() && words[k] != "*"; ++k) {
    if (words[k] == "const") {
      base_const = true;
    } else if (words[k] != "volatile") {
      base_words.push_back(words[k]);
    }
  }
  type.push_back({CanonicalBase(base_words), base_const});
  for (; k < words.size(); ++k) {
    if (words[k] == "*") type.push_back({"*", false});
    if (words[k] == "const") type.back().is_const = true;
  }
  if (drop_top_const) type.back().is_const = false;
  return type;
}

std::vector<std::string> SplitCParams(std::string_view params) {
  while (!params.empty() && std::isspace(static_cast<unsigned char>(params.front()))) params.remove_prefix(1);
  while (!params.empty() && std::isspace(static_cast<unsigned char>(params.back()))) params.remove_suffix(1);
  if (params.size() >= 2 && params.front() == '(' && params.back() == ')') {
    params = params.substr(1, params.size() - 2);
  }
  std::vector<std::string> out;
  std::size_t start = 0;
  int depth = 0;
  for (std::size_t i = 0; i <= params.size(); ++i) {
    if (i < params.size() && (params[i] == '(' || params[i] == '[')) ++depth;
    if (i < params.size() && (params[i] == ')' || params[i] == ']')) --depth;
    if (i == params.size() || (params[i] == ',' && depth == 0)) {
      std::string piece(params.substr(start, i - start));
      const auto words = CWords(piece);
      if (!words.empty() && !(words.size() == 1 && words[0] == "void")) out.push_back(piece);
      start = i + 1;
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Checks

namespace {
template <typename... Parts>
std::string Cat(const Parts&... parts) {
  std::ostringstream os;
  (os << ... << parts);
  return os.str();
}
}  // namespace

std::vector<std::string> CheckStructs(const RustBindings& rust, const std::vector<OurStruct>& ours) {
  std::vector<std::string> problems;
  for (const OurStruct& s : ours) {
    std::string error;
    const auto layout = rust.LayoutOfRecord(s.name, &error);
    if (!layout) {
      problems.push_back(Cat(s.name, ": ", error));
      continue;
    }
    const std::string kind = s.is_union ? "union" : "struct";
    const std::string rust_kind = layout->is_union ? "union" : "struct";
    if (kind != rust_kind) {
      problems.push_back(Cat(s.name, ": ours is a ", kind, ", bindings.rs (", layout->rust_name, ") a ", rust_kind));
    }
    if (s.size != layout->size) {
      problems.push_back(
          Cat(s.name, ": our sizeof ", s.size, ", bindings.rs (", layout->rust_name, ") ", layout->size));
    }
    if (s.align != layout->align) {
      problems.push_back(
          Cat(s.name, ": our alignof ", s.align, ", bindings.rs (", layout->rust_name, ") ", layout->align));
    }
    if (s.fields.size() != layout->fields.size()) {
      problems.push_back(Cat(s.name, ": we list ", s.fields.size(), " fields, bindings.rs (", layout->rust_name,
                             ") has ", layout->fields.size()));
    }
    for (std::size_t i = 0; i < std::min(s.fields.size(), layout->fields.size()); ++i) {
      const OurField& o = s.fields[i];
      const FieldLayout& r = layout->fields[i];
      const std::string where = Cat(s.name, ".", o.name);
      if (r.name != o.name) {
        problems.push_back(Cat(where, ": field #", i, " is named '", r.name, "' in bindings.rs"));
      }
      if (o.offset != r.offset) problems.push_back(Cat(where, ": our offset ", o.offset, ", bindings.rs ", r.offset));
      if (o.size != r.size) problems.push_back(Cat(where, ": our size ", o.size, ", bindings.rs ", r.size));
      if (o.align != r.align) problems.push_back(Cat(where, ": our alignment ", o.align, ", bindings.rs ", r.align));
    }
  }
  return problems;
}

std::vector<std::string> CheckFieldListComplete(const std::vector<OurStruct>& ours) {
  std::vector<std::string> problems;
  for (const OurStruct& s : ours) {
    std::size_t end = 0, align = 1;
    for (const OurField& f : s.fields) {
      const std::size_t expected = s.is_union ? 0 : RoundUp(end, f.align);
      if (f.offset != expected) {
        problems.push_back(Cat(s.name, ".", f.name, ": at offset ", f.offset, " but ", expected,
                               " follows the fields listed before it: the test's field list misses a field "
                               "or is out of order"));
      }
      end = s.is_union ? std::max(end, f.size) : f.offset + f.size;
      align = std::max(align, f.align);
    }
    if (RoundUp(end, align) != s.size) {
      problems.push_back(Cat(s.name, ": the listed fields make ", RoundUp(end, align), " bytes but sizeof is ", s.size,
                             ": the test's field list misses a field"));
    }
  }
  return problems;
}

std::vector<std::string> CheckConstants(const RustBindings& rust, const std::vector<OurConstant>& ours,
                                        const std::set<std::string>& newer_than_bindings) {
  std::vector<std::string> problems;
  std::set<std::string> seen;
  for (const OurConstant& c : ours) {
    if (!seen.insert(c.name).second) problems.push_back(Cat(c.name, ": listed twice in the test"));
    const auto found = rust.FindConstant(c.name);
    if (found.empty()) {
      if (newer_than_bindings.count(c.name) == 0) {
        problems.push_back(Cat(c.name,
                               ": not found in bindings.rs (if it is newer than bindings.rs, add it to the "
                               "allow-list of newer names)"));
      }
      continue;
    }
    for (const RustConst* r : found) {
      const std::string rust_name = r->module.empty() ? r->name : r->module + "::" + r->name;
      if (!r->is_integer) {
        problems.push_back(Cat(c.name, ": bindings.rs ", rust_name, " (line ", r->line, ") is not an integer"));
      } else if (r->value != c.value) {
        problems.push_back(
            Cat(c.name, ": our value ", c.value, ", bindings.rs ", r->value, " (", rust_name, ", line ", r->line, ")"));
      }
    }
  }
  return problems;
}

std::vector<std::string> CheckFunctions(const RustBindings& rust, const std::vector<OurFunction>& ours,
                                        const std::set<std::string>& newer_than_bindings) {
  std::vector<std::string> problems;
  // ABI: equal after every alias is resolved. Names: where both sides name a typedef at the same
  // place (nvmlClockType_t vs nvmlClockId_t), the names must be the same one through aliases.
  auto compare = [&](const std::string& where, const CType& ours_c, const CType& rust_c) {
    const CType ours_x = rust.Expand(ours_c), rust_x = rust.Expand(rust_c);
    if (ours_x != rust_x) {
      problems.push_back(Cat(where, ": ours '", ToString(ours_c), "' (", ToString(ours_x), "), bindings.rs '",
                             ToString(rust_c), "' (", ToString(rust_x), ")"));
      return;
    }
    if (ours_c.size() == rust_c.size() && !IsCBuiltinName(ours_c[0].name) && !IsCBuiltinName(rust_c[0].name)) {
      const auto a = rust.AliasChain(ours_c[0].name), b = rust.AliasChain(rust_c[0].name);
      const bool same = std::any_of(a.begin(), a.end(),
                                    [&](const std::string& n) { return std::find(b.begin(), b.end(), n) != b.end(); });
      if (!same) {
        problems.push_back(Cat(where, ": ours '", ToString(ours_c), "', bindings.rs '", ToString(rust_c),
                               "' (the same ABI, but a different type)"));
      }
    }
  };
  std::set<std::string> seen;
  for (const OurFunction& f : ours) {
    if (!seen.insert(f.name).second) problems.push_back(Cat(f.name, ": listed twice"));
    const auto it = rust.functions().find(f.name);
    if (it == rust.functions().end()) {
      if (newer_than_bindings.count(f.name) == 0) {
        problems.push_back(Cat(f.name,
                               ": not in bindings.rs's NvmlLib (if it is newer than bindings.rs, add it to "
                               "the allow-list of newer symbols)"));
      }
      continue;
    }
    const RustFunction& r = it->second;
    const CType rust_ret = r.ret ? rust.ToC(*r.ret) : CType{{"void", false}};
    CType our_ret = ParseCType(f.ret, false);
    compare(Cat(f.name, ": return type"), our_ret, rust_ret);
    const std::vector<std::string> params = SplitCParams(f.params);
    if (params.size() != r.params.size()) {
      problems.push_back(Cat(f.name, ": we declare ", params.size(), " parameters, bindings.rs ", r.params.size()));
      continue;
    }
    for (std::size_t i = 0; i < params.size(); ++i) {
      CType rust_c = rust.ToC(*r.params[i].type);
      rust_c.back().is_const = false;  // top-level const is not part of the ABI
      compare(Cat(f.name, ": parameter ", i + 1, " (", r.params[i].name, ")"), ParseCType(params[i], true), rust_c);
    }
  }
  return problems;
}

std::vector<std::string> CheckTypedefs(const RustBindings& rust, const std::vector<OurTypedef>& ours) {
  std::vector<std::string> problems;
  for (const OurTypedef& t : ours) {
    std::string error;
    const auto info = rust.InfoOfName(t.name, &error);
    if (!info) {
      problems.push_back(Cat(t.name, ": ", error));
      continue;
    }
    if (info->size != t.size) problems.push_back(Cat(t.name, ": our sizeof ", t.size, ", bindings.rs ", info->size));
    if (info->is_pointer != t.is_pointer) {
      problems.push_back(Cat(t.name, ": ours is ", t.is_pointer ? "" : "not ", "a pointer, bindings.rs's is ",
                             info->is_pointer ? "" : "not"));
    }
    if (info->is_signed != t.is_signed) {
      problems.push_back(Cat(t.name, ": ours is ", t.is_signed ? "signed" : "unsigned", ", bindings.rs's is ",
                             info->is_signed ? "signed" : "unsigned"));
    }
  }
  return problems;
}

}  // namespace gw::abi_test
