/* SPDX-License-Identifier: MIT */
/*
** test_cpp.cpp - include/atomtab.hpp, the C++17 wrapper: atom handles that
** reference-count by copy and release on destruction, hashing and
** equality, string_view in and out, the table wrapper. Built with
** -std=c++17 -Wall -Wextra -pedantic -Werror; the header comes first, so it
** is proven self-contained.
*/
#include "atomtab.hpp"

#include <csetjmp>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <vector>

extern "C" {   /* cmocka 1.1's header does not say so itself */
#include <cmocka.h>
}

namespace {

/* Counts blocks, so a test can show every atom and the table were freed. */
struct counter {
    long live = 0;
};

void *c_alloc(void *ud, std::size_t size)
{
    static_cast<counter *>(ud)->live++;
    return std::malloc(size);
}

void c_free(void *ud, void *p, std::size_t)
{
    static_cast<counter *>(ud)->live--;
    std::free(p);
}

/* A table with no static sets and the counting allocator. */
atab::table counted_table(counter &c, atab_allocator &al)
{
    al = atab_allocator{c_alloc, c_free, nullptr, &c};
    atab_options o;
    std::memset(&o, 0, sizeof o);
    o.flags = ATAB_NO_DEFAULT_STATICS;
    o.allocator = &al;
    return atab::table(&o);
}

/* The atom's count after flushing threads' caches (0 when unused). */
std::size_t unused_atoms(const atab::table &t)
{
    atab_stats st;
    atab_get_stats(t.get(), &st);
    return st.unused;
}

void equal_strings_give_equal_atoms_and_views_read_them_back(void **)
{
    atab::table t;
    assert_true(static_cast<bool>(t));
    std::string s = "data-";
    s += "id";
    atab::atom a = t.intern(s);
    atab::atom b = t.intern(std::string_view("data-id"));
    atab::atom c = t.intern("data-ix");
    assert_true(static_cast<bool>(a));
    assert_true(a == b);
    assert_true(a != c);
    assert_true(a.get() == b.get());
    assert_true(a.view() == "data-id");
    assert_string_equal(a.c_str(), "data-id");
    assert_int_equal(a.size(), 7);
    assert_false(a.empty());
    assert_true(a.table() == t.get());
    std::string_view with_nul("a\0b", 3);   /* any bytes */
    assert_true(t.intern(with_nul).view() == with_nul);
}

void copies_take_references_and_destruction_releases_them(void **)
{
    counter cnt;
    atab_allocator al;
    {
        atab::table t = counted_table(cnt, al);
        {
            atab::atom a = t.intern("copied");
            std::vector<atab::atom> copies(100, a);   /* 100 atab_ref */
            atab::atom assigned;
            assigned = a;
            assigned = copies[5];                    /* self-consistent swap */
            a.reset();
            assert_false(static_cast<bool>(a));
            assert_int_equal(t.gc(), 0);             /* still held */
            assert_int_equal(t.count(), 1);
        }                                            /* every copy released */
        assert_int_equal(unused_atoms(t), 1);
        assert_int_equal(t.gc(), 1);
        assert_int_equal(t.count(), 0);
    }
    assert_int_equal(cnt.live, 0);                   /* the table went too */
}

void moves_take_over_the_reference(void **)
{
    atab::table t;
    atab::atom a = t.intern("moved");
    const atab_atom *p = a.get();
    atab::atom b = std::move(a);
    assert_false(static_cast<bool>(a));              /* NOLINT: moved-from is null */
    assert_true(b.get() == p);
    atab::atom c;
    c = std::move(b);
    assert_true(c.get() == p);
    assert_true(a.view().empty() && a.size() == 0 && a.hash() == 0);
    assert_string_equal(a.c_str(), "");
    c.reset();
    assert_int_equal(unused_atoms(t), 1);            /* one reference, released once */
    static_assert(std::is_nothrow_move_constructible_v<atab::atom>);
    static_assert(std::is_nothrow_move_assignable_v<atab::atom>);
    static_assert(!std::is_copy_constructible_v<atab::table>);
}

void adopt_and_release_hand_references_to_and_from_c(void **)
{
    atab::table t;
    const atab_atom *raw = atab_intern_cstr(t.get(), "from-c");
    atab::atom a = atab::atom::adopt(t.get(), raw);   /* owns C's reference */
    const atab_atom *back = a.release();              /* and gives it back */
    assert_true(back == raw);
    assert_false(static_cast<bool>(a));
    assert_int_equal(t.gc(), 0);
    atab_release(t.get(), back);
    assert_int_equal(t.gc(), 1);
}

void atoms_work_as_keys_of_unordered_containers(void **)
{
    atab::table t;
    std::unordered_set<atab::atom> set;
    std::unordered_map<atab::atom, int> count;
    const char *words[] = {"x-div", "x-span", "x-div", "x-a", "x-span", "x-div"};
    for (const char *w : words) {
        atab::atom a = t.intern(w);
        set.insert(a);
        count[a]++;
    }
    assert_int_equal(set.size(), 3);
    assert_int_equal(count[t.intern("x-div")], 3);
    assert_int_equal(count[t.intern("x-span")], 2);
    atab::atom a = t.intern("x-a");
    assert_int_equal(std::hash<atab::atom>{}(a), atab_hash(a.get()));
    assert_true(set.count(a) == 1);
    assert_int_equal(t.count(), 3);                   /* dynamic atoms, one each */
}

void lookup_never_inserts(void **)
{
    atab::table t;
    assert_false(static_cast<bool>(t.lookup("absent")));
    assert_int_equal(atab_last_error(), ATAB_OK);
    assert_int_equal(t.count(), 0);
    atab::atom a = t.intern("present");
    assert_true(t.lookup("present") == a);
}

void utf16_text_is_the_same_atom_and_lone_surrogates_fail(void **)
{
    atab::table t;
    atab::atom a = t.intern(u"caf\u00e9 \U0001F600");
    atab::atom b = t.intern("caf\xc3\xa9 \xf0\x9f\x98\x80");
    assert_true(static_cast<bool>(a));
    assert_true(a == b);
    const char16_t lone[] = {u'x', static_cast<char16_t>(0xd800)};
    atab::atom bad = t.intern(std::u16string_view(lone, 2));
    assert_false(static_cast<bool>(bad));
    assert_int_equal(atab_last_error(), ATAB_EUTF16);
}

void static_atoms_are_the_same_on_every_table(void **)
{
    atab::table t1, t2;
    atab::atom d1 = t1.intern("div"), d2 = t2.intern("div");
    assert_true(d1.is_static());
    assert_true(d1 == d2);                            /* read-only data, shared */
    atab::atom copy = d1;                             /* no count to change */
    assert_int_equal(t1.count(), 0);
}

void tables_move_and_a_null_table_fails_calls(void **)
{
    atab::table t;
    atab_table *raw = t.get();
    atab::table u = std::move(t);
    assert_true(u.get() == raw);
    assert_false(static_cast<bool>(t));
    atab::atom a = t.intern("x");                     /* the moved-from table */
    assert_false(static_cast<bool>(a));
    assert_int_equal(atab_last_error(), ATAB_EINVAL);
    assert_int_equal(t.gc(), 0);
    atab::table v;
    v = std::move(u);                                 /* frees v's own table */
    assert_true(v.get() == raw);
    atab_options bad;
    std::memset(&bad, 0, sizeof bad);
    bad.n_static_sets = 1;                            /* sets missing: invalid */
    atab::table w(&bad);
    assert_false(static_cast<bool>(w));
}

/* A table member of an aggregate, value-initialized: the default
** constructor is not explicit (clang refuses `holder h{}` otherwise). */
struct holder {
    atab::table t;
    int n;
};

void a_default_table_is_a_member_an_aggregate_can_value_initialize(void **)
{
    holder h{};
    atab::table t2 = {};
    assert_true(static_cast<bool>(h.t) && static_cast<bool>(t2) && h.n == 0);
    atab::atom a = h.t.intern("member");
    assert_true(static_cast<bool>(a));
    assert_true(a.view() == "member");
}

} // namespace

int main()
{
    const CMUnitTest tests[] = {
        cmocka_unit_test(equal_strings_give_equal_atoms_and_views_read_them_back),
        cmocka_unit_test(copies_take_references_and_destruction_releases_them),
        cmocka_unit_test(moves_take_over_the_reference),
        cmocka_unit_test(adopt_and_release_hand_references_to_and_from_c),
        cmocka_unit_test(atoms_work_as_keys_of_unordered_containers),
        cmocka_unit_test(lookup_never_inserts),
        cmocka_unit_test(utf16_text_is_the_same_atom_and_lone_surrogates_fail),
        cmocka_unit_test(static_atoms_are_the_same_on_every_table),
        cmocka_unit_test(tables_move_and_a_null_table_fails_calls),
        cmocka_unit_test(a_default_table_is_a_member_an_aggregate_can_value_initialize),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
