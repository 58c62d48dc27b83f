/* SPDX-License-Identifier: MIT */
/*
** atomtab.hpp - a small header-only C++17 wrapper over atomtab.h: an
** owning atom handle (copy = atab_ref, destructor = atab_release), hashable
** and comparable, and a move-only table. string_view in and out.
**
** No exceptions: as in C, a failed call gives a null atom (or a null
** table) and atab_last_error() says why. An atom must be destroyed before
** its table, as a C reference must be released before atab_table_free.
*/
#ifndef ATOMTAB_HPP
#define ATOMTAB_HPP

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>
#include <utility>

#include "atomtab.h"

namespace atab {

/**
 * One reference to an atom of one table, or null. Copying takes another
 * reference (atab_ref: no shared write on the thread's cache hit path),
 * moving takes it over, destruction releases it. Two atoms are equal when
 * they are the same atom, which for atoms of one table means the same
 * characters; hashing is atab_hash (the atom's address, mixed).
 */
class atom {
public:
    atom() noexcept = default;

    /** Takes over a reference the caller owns (as atab_intern returns one);
     *  `a` may be NULL (a null atom). */
    static atom adopt(atab_table *t, const atab_atom *a) noexcept { return atom(t, a); }

    atom(const atom &o) noexcept : t_(o.t_), a_(o.a_)
    {
        if (a_)
            atab_ref(a_);
    }
    atom(atom &&o) noexcept : t_(o.t_), a_(std::exchange(o.a_, nullptr)) {}
    atom &operator=(atom o) noexcept   /* copy or move, then swap */
    {
        swap(o);
        return *this;
    }
    ~atom() { reset(); }

    void swap(atom &o) noexcept
    {
        std::swap(t_, o.t_);
        std::swap(a_, o.a_);
    }

    /** Releases the reference; the atom is null after. */
    void reset() noexcept
    {
        if (a_)
            atab_release(t_, std::exchange(a_, nullptr));
    }

    /** Gives up ownership: the caller now owns the reference (or NULL). */
    [[nodiscard]] const atab_atom *release() noexcept { return std::exchange(a_, nullptr); }

    explicit operator bool() const noexcept { return a_ != nullptr; }
    const atab_atom *get() const noexcept { return a_; }
    atab_table *table() const noexcept { return t_; }

    /** The characters (UTF-8, NUL-terminated after size() bytes); an empty
     *  view for a null atom. */
    std::string_view view() const noexcept
    {
        return a_ ? std::string_view(atab_chars(a_), atab_len(a_)) : std::string_view();
    }
    const char *c_str() const noexcept { return a_ ? atab_chars(a_) : ""; }
    std::size_t size() const noexcept { return a_ ? atab_len(a_) : 0; }
    bool empty() const noexcept { return size() == 0; }
    bool is_static() const noexcept { return a_ && atab_is_static(a_); }
    std::size_t hash() const noexcept { return a_ ? atab_hash(a_) : 0; }

    friend bool operator==(const atom &x, const atom &y) noexcept { return x.a_ == y.a_; }
    friend bool operator!=(const atom &x, const atom &y) noexcept { return x.a_ != y.a_; }
    friend void swap(atom &x, atom &y) noexcept { x.swap(y); }

private:
    atom(atab_table *t, const atab_atom *a) noexcept : t_(t), a_(a) {}

    atab_table *t_ = nullptr;
    const atab_atom *a_ = nullptr;
};

/**
 * An owning table (atab_table_new / atab_table_free), move-only. Its calls
 * are atomtab.h's, with atoms returned as atab::atom. A null table (failed
 * creation, moved from) fails every call with a null atom.
 */
class table {
public:
    /** atab_table_new(NULL), the default options: check with operator bool. */
    table() noexcept : t_(atab_table_new(nullptr)) {}
    /** atab_table_new(opts): check with operator bool. */
    explicit table(const atab_options *opts) noexcept : t_(atab_table_new(opts)) {}
    table(table &&o) noexcept : t_(std::exchange(o.t_, nullptr)) {}
    table &operator=(table &&o) noexcept
    {
        if (this != &o) {
            atab_table_free(t_);
            t_ = std::exchange(o.t_, nullptr);
        }
        return *this;
    }
    table(const table &) = delete;
    table &operator=(const table &) = delete;
    ~table() { atab_table_free(t_); }

    explicit operator bool() const noexcept { return t_ != nullptr; }
    atab_table *get() const noexcept { return t_; }

    /** The atom for these bytes; null on error (atab_last_error()). */
    atom intern(std::string_view s) const noexcept
    {
        return atom::adopt(t_, atab_intern(t_, s.data(), s.size()));
    }
    /** UTF-16 text (unpaired surrogates: null, ATAB_EUTF16). */
    atom intern(std::u16string_view s) const noexcept
    {
        static_assert(sizeof(char16_t) == sizeof(std::uint16_t), "char16_t is 16 bits");
        return atom::adopt(t_, atab_intern_utf16(t_, reinterpret_cast<const std::uint16_t *>(s.data()),
                                                 s.size()));
    }
    /** The atom if these bytes are interned, else null (never inserts). */
    atom lookup(std::string_view s) const noexcept
    {
        return atom::adopt(t_, atab_lookup(t_, s.data(), s.size()));
    }
    /** atab_gc: frees the unused atoms, returns how many. */
    std::size_t gc() const noexcept { return atab_gc(t_); }
    /** Live dynamic atoms (atab_count). */
    std::size_t count() const noexcept { return atab_count(t_); }

private:
    atab_table *t_;
};

} // namespace atab

namespace std {
template <>
struct hash<atab::atom> {
    size_t operator()(const atab::atom &a) const noexcept { return a.hash(); }
};
} // namespace std

#endif /* ATOMTAB_HPP */
