// The exports rule: a backend shows one symbol. Read from the file's
// dynamic symbol table (no load), every read bounded by the file's size,
// so a truncated or hostile file is a reason, not a crash of the kit.
#include <elf.h>

#include <cstring>
#include <fstream>
#include <iterator>

#include "rules.hpp"

namespace zl::conform {
namespace {

template <class T>
bool at(const std::string& bytes, uint64_t offset, T* out) {
  if (offset > bytes.size() || bytes.size() - offset < sizeof(T)) return false;
  std::memcpy(out, bytes.data() + offset, sizeof(T));
  return true;
}

// Names of the symbols the file defines and shows to the dynamic linker.
bool exported_names(const std::string& bytes, std::vector<std::string>* names) {
  Elf64_Ehdr eh{};
  if (!at(bytes, 0, &eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64)
    return false;
  for (uint16_t i = 0; i < eh.e_shnum; ++i) {
    Elf64_Shdr sh{};
    if (!at(bytes, eh.e_shoff + uint64_t{i} * eh.e_shentsize, &sh)) return false;
    if (sh.sh_type != SHT_DYNSYM) continue;
    Elf64_Shdr strtab{};
    if (!at(bytes, eh.e_shoff + uint64_t{sh.sh_link} * eh.e_shentsize, &strtab)) return false;
    for (uint64_t off = sizeof(Elf64_Sym); off + sizeof(Elf64_Sym) <= sh.sh_size; off += sizeof(Elf64_Sym)) {
      Elf64_Sym sym{};
      if (!at(bytes, sh.sh_offset + off, &sym)) return false;
      const unsigned bind = ELF64_ST_BIND(sym.st_info);
      const unsigned vis = ELF64_ST_VISIBILITY(sym.st_other);
      if (sym.st_shndx == SHN_UNDEF || (bind != STB_GLOBAL && bind != STB_WEAK && bind != STB_GNU_UNIQUE) ||
          vis == STV_HIDDEN || vis == STV_INTERNAL)
        continue;
      const uint64_t name_at = strtab.sh_offset + sym.st_name;
      if (name_at >= bytes.size()) return false;
      names->emplace_back(bytes.c_str() + name_at, ::strnlen(bytes.c_str() + name_at, bytes.size() - name_at));
    }
  }
  return true;
}

}  // namespace

std::string exports_problem(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> names;
  if (!exported_names(bytes, &names)) return "the file is not a 64-bit ELF object whose symbols can be read";
  std::string others;
  size_t count = 0;
  bool entry = false;
  for (const std::string& n : names) {
    if (n == ZL_BACKEND_ENTRY_SYMBOL) {
      entry = true;
    } else if (++count <= 3) {
      others += (others.empty() ? "" : ", ") + n;
    }
  }
  if (!entry) return "the file does not export " ZL_BACKEND_ENTRY_SYMBOL;
  if (count == 0) return {};
  return "the file exports " + std::to_string(count) + " symbol(s) besides the entry (" + others +
         (count > 3 ? ", ..." : "") + "): build with -fvisibility=hidden and backend.map (zlcore_add_backend)";
}

}  // namespace zl::conform
