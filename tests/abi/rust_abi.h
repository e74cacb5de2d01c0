// A small reader for the parts of a bindgen-generated Rust file (nvml-wrapper-sys's bindings.rs)
// that describe the NVML C ABI, and the checks that compare it with our own declarations.
//
// Only what bindgen emits for nvml.h is understood: `pub const`, `pub type`, `pub use self::X as
// Y`, `#[repr(C)] pub struct` / `pub union` with named fields, `pub mod` blocks of constants, and
// the `pub struct NvmlLib { pub name: Result<unsafe extern "C" fn(..) -> R, ::libloading::Error> }`
// function table. Everything else (impl blocks, extern crate, use) is skipped as a balanced item.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace gw::abi_test {

struct RustType;
using RustTypePtr = std::shared_ptr<const RustType>;

struct RustParam {
  std::string name;
  RustTypePtr type;
};

struct RustType {
  enum class Kind { kNamed, kPointer, kArray, kFnPtr };
  Kind kind = Kind::kNamed;
  std::string name;               // kNamed: last path segment ("c_uint", "nvmlDevice_t", "Result")
  std::vector<RustTypePtr> args;  // kNamed: generic arguments
  bool pointee_const = false;     // kPointer: `*const T` (true) or `*mut T` (false)
  RustTypePtr inner;              // kPointer: pointee, kArray: element
  unsigned long long count = 0;   // kArray
  std::vector<RustParam> params;  // kFnPtr
  RustTypePtr ret;                // kFnPtr: null when the function returns ()
  std::string text;               // spelling, for messages
};

struct RustField {
  std::string name;
  RustTypePtr type;
};

struct RustRecord {
  std::string name;
  bool is_union = false;
  std::vector<RustField> fields;
};

struct RustConst {
  std::string name;
  std::string module;     // "" at top level, "field_id" inside `pub mod field_id`
  std::string type_text;  // e.g. "u32", "nvmlReturn_enum"
  bool is_integer = false;
  long long value = 0;  // two's complement of the literal when is_integer
  int line = 0;
};

struct RustFunction {
  std::string name;
  std::vector<RustParam> params;
  RustTypePtr ret;  // null: returns ()
};

class ParseError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One level of a C type, innermost first: levels[0] is the base type (a canonical C builtin
// such as "unsigned int" or a type name), each further level is a pointer to the previous one.
// is_const is the const-ness of that level's object (levels[0].is_const: `const char *`).
struct CLevel {
  std::string name;  // base name, or "*"
  bool is_const = false;
  bool operator==(const CLevel&) const = default;
};
using CType = std::vector<CLevel>;
std::string ToString(const CType& type);

struct FieldLayout {
  std::string name;
  std::size_t offset = 0, size = 0, align = 0;
};
struct RecordLayout {
  std::string rust_name;
  bool is_union = false;
  std::size_t size = 0, align = 0;
  std::vector<FieldLayout> fields;
};
struct ScalarInfo {
  std::size_t size = 0, align = 0;
  bool is_signed = false;
  bool is_pointer = false;
};

class RustBindings {
 public:
  // Throws ParseError (with the line) on text it cannot read.
  static RustBindings Parse(std::string_view text);

  const std::map<std::string, RustRecord>& records() const { return records_; }
  const std::map<std::string, RustTypePtr>& aliases() const { return aliases_; }
  const std::vector<RustConst>& constants() const { return constants_; }
  const std::map<std::string, RustFunction>& functions() const { return functions_; }

  // Constants that a C name denotes: `pub const NAME`, `pub mod m { pub const NAME }`, and the
  // bindgen enum form `pub const E_NAME: E = v;` where E is a `pub type E = raw::c_*`.
  std::vector<const RustConst*> FindConstant(const std::string& c_name) const;

  // C layout of a struct/union named by its typedef or its own name, following aliases.
  std::optional<RecordLayout> LayoutOfRecord(const std::string& name, std::string* error) const;
  // Size/alignment of any type, following aliases.
  std::optional<ScalarInfo> InfoOf(const RustType& type, std::string* error) const;
  std::optional<ScalarInfo> InfoOfName(const std::string& name, std::string* error) const;

  // The C spelling of a Rust type, unexpanded (`*mut nvmlPstates_t` -> nvmlPstates_t *) and with
  // every alias resolved (`*mut nvmlPstates_t` -> unsigned int *).
  CType ToC(const RustType& type) const;
  CType Expand(CType type) const;
  // nvmlPstates_t -> {nvmlPstates_t, nvmlPStates_enum}: the names an alias goes through,
  // stopping at a builtin or a pointer.
  std::vector<std::string> AliasChain(const std::string& name) const;

 private:
  friend class Parser;
  std::map<std::string, RustRecord> records_;
  std::map<std::string, RustTypePtr> aliases_;
  std::vector<RustConst> constants_;
  std::map<std::string, RustFunction> functions_;
  std::multimap<std::string, std::size_t> const_index_;
};

// Parses a C type as written in our header ("const char *", "nvmlDevice_t *device") into the
// same form; a trailing parameter name is dropped. Top-level const is dropped when
// drop_top_const (it is not part of a parameter's ABI).
CType ParseCType(std::string_view text, bool drop_top_const);
// "(nvmlDevice_t device, unsigned int *count)" -> the parameter types; "(void)" -> none.
std::vector<std::string> SplitCParams(std::string_view params);

// ----- Our side, as plain data so that the self-tests can feed deliberately wrong inputs. -----

struct OurField {
  const char* name;
  std::size_t offset, size, align;
};
struct OurStruct {
  const char* name;
  bool is_union;
  std::size_t size, align;
  std::vector<OurField> fields;
};
struct OurConstant {
  const char* name;
  long long value;
};
struct OurFunction {
  const char* name;
  const char* ret;
  const char* params;
};
struct OurTypedef {
  const char* name;
  std::size_t size;
  bool is_signed;
  bool is_pointer;
};

// Each returns one readable line per problem; empty means everything matched.
std::vector<std::string> CheckStructs(const RustBindings& rust, const std::vector<OurStruct>& ours);
// That the listed fields are every field of our struct: they tile it with only padding between.
std::vector<std::string> CheckFieldListComplete(const std::vector<OurStruct>& ours);
std::vector<std::string> CheckConstants(const RustBindings& rust, const std::vector<OurConstant>& ours,
                                        const std::set<std::string>& newer_than_bindings);
std::vector<std::string> CheckFunctions(const RustBindings& rust, const std::vector<OurFunction>& ours,
                                        const std::set<std::string>& newer_than_bindings);
std::vector<std::string> CheckTypedefs(const RustBindings& rust, const std::vector<OurTypedef>& ours);

}  // namespace gw::abi_test
