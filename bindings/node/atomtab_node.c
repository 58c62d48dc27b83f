/* SPDX-License-Identifier: MIT */
/*
** atomtab_node.c - the Node-API addon: intern(), lookup(), stats(), gc(),
** report(), version, and NativeElement (the id-read benchmark's Element).
**
** One table per process, shared by every worker thread: equal strings are
** one atom in every isolate. It is made by the first environment that
** loads the addon and freed by the cleanup hook of the last one (the
** library defers that free while strings still hold external handles).
** Each environment has its own host cache (a V8 string belongs to one
** isolate): one external string per atom, held by a napi_ref.
**
** Every string made here that points at an atom's chars holds an external
** handle; its finalizer releases it. Atoms store UTF-8: an ASCII atom's
** chars are valid Latin-1, so its external string points at them; other
** atoms get an external string over a converted buffer (Latin-1 when every
** character is below 0x100, else UTF-16) that holds the handle too and is
** freed with it. A JS string with a lone surrogate is not Unicode text and
** has no UTF-8 form: it is a TypeError, never silently U+FFFD.
*/
#define NAPI_EXPERIMENTAL   /* node_api_create_external_string_* (Node 20) */
#include <node_api.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomtab.h"

/* ---- the process's table ---- */

static pthread_mutex_t proc_lock = PTHREAD_MUTEX_INITIALIZER;
static atab_table *proc_table;   /* under proc_lock */
static size_t proc_envs;         /* environments using it */

/* The process's table, made on first use, with one count for the caller's
** environment; NULL (error set) when it cannot be made. */
static atab_table *table_acquire(void)
{
    pthread_mutex_lock(&proc_lock);
    if (!proc_table)
        proc_table = atab_table_new(NULL);
    atab_table *t = proc_table;
    proc_envs += t != NULL;
    pthread_mutex_unlock(&proc_lock);
    return t;
}

/* Drops an environment's count; the last frees the table. */
static void table_release(void)
{
    pthread_mutex_lock(&proc_lock);
    if (--proc_envs == 0) {
        atab_table_free(proc_table);
        proc_table = NULL;
    }
    pthread_mutex_unlock(&proc_lock);
}

/* ---- one environment (isolate) ---- */

typedef struct addon {
    atab_table *t;
    napi_env env;
    atab_host_cache *cache;   /* this isolate's strings */
} addon;

#define CHECK(env, call)                                                   \
    do {                                                                   \
        if ((call) != napi_ok) {                                           \
            napi_throw_error((env), NULL, "atomtab: " #call " failed");    \
            return NULL;                                                   \
        }                                                                  \
    } while (0)

/* Throws the library's last error: RangeError for a length, TypeError for
** text that is not Unicode, Error otherwise. */
static void *throw_atab(napi_env env, const char *what)
{
    char msg[160];
    int e = atab_last_error();
    snprintf(msg, sizeof msg, "atomtab.%s: %s", what, atab_strerror(e));
    if (e == ATAB_ETOOLONG)
        napi_throw_range_error(env, "ERR_ATOMTAB_TOO_LONG", msg);
    else
        napi_throw_error(env, e == ATAB_ENOMEM ? "ERR_ATOMTAB_NOMEM" : "ERR_ATOMTAB", msg);
    return NULL;
}

/* ---- strings for atoms ---- */

/* The exact Node-API signature around atomtab's adapter (no cast). */
static void finalize_chars(node_api_basic_env env, void *data, void *hint)
{
    atab_external_finalize_napi((void *)env, data, hint);
}

/* A converted buffer that holds the handle: freed by its finalizer. */
typedef struct conv {
    atab_table *t;
    const atab_atom *a;
    _Alignas(8) char buf[];
} conv;

static void finalize_conv(node_api_basic_env env, void *data, void *hint)
{
    conv *c = hint;
    (void)env; (void)data;
    atab_external_release(c->t, c->a);
    free(c);
}

/* Decodes UTF-8 (valid: atoms come from well-formed JS strings) to UTF-16;
** returns the units written, and *max the largest code unit. */
static size_t utf8_to_utf16(const unsigned char *s, size_t n, char16_t *out,
                            unsigned *max)
{
    size_t j = 0;
    *max = 0;
    for (size_t i = 0; i < n;) {
        unsigned c = s[i], k = c < 0x80 ? 0 : c < 0xe0 ? 1 : c < 0xf0 ? 2 : 3;
        c &= k ? 0x3f >> k : 0x7f;
        for (unsigned m = 1; m <= k && i + m < n; m++)
            c = c << 6 | (s[i + m] & 0x3f);
        i += k + 1;
        if (c >= 0x10000) {
            c -= 0x10000;
            out[j++] = (char16_t)(0xd800 | c >> 10);
            out[j++] = (char16_t)(0xdc00 | (c & 0x3ff));
            *max = 0xffff;
        } else {
            out[j++] = (char16_t)c;
            *max = c > *max ? c : *max;
        }
    }
    return j;
}

/* An external string over a converted copy (non-ASCII atoms). Sets
** *refs to 1 when the string holds a handle. */
static napi_value external_converted(addon *ad, const atab_atom *a, unsigned *refs)
{
    napi_env env = ad->env;
    size_t n = atab_len(a);
    conv *c = malloc(sizeof *c + 2 * n + 2);
    napi_value v = NULL;
    unsigned max;
    bool copied = false;
    napi_status st;
    if (!c)
        return NULL;
    char16_t *u = (char16_t *)c->buf;
    size_t units = utf8_to_utf16((const unsigned char *)atab_chars(a), n, u, &max);
    c->t = ad->t;
    c->a = atab_external_acquire(ad->t, a);
    if (max < 0x100) {   /* Latin-1: narrow in place */
        for (size_t i = 0; i < units; i++)
            c->buf[i] = (char)u[i];
        st = node_api_create_external_string_latin1(env, c->buf, units, finalize_conv, c,
                                                    &v, &copied);
    } else {
        st = node_api_create_external_string_utf16(env, u, units, finalize_conv, c, &v,
                                                   &copied);
    }
    if (st != napi_ok) {
        atab_external_release(c->t, a);
        free(c);
        return NULL;
    }
    *refs = !copied;   /* copied: the finalizer already ran */
    return v;
}

/* A new external string for `a`. */
static napi_value external_string(addon *ad, const atab_atom *a, unsigned *refs)
{
    napi_value v = NULL;
    bool copied = false;
    if (!atab_is_ascii(a))
        return external_converted(ad, a, refs);
    atab_external_acquire(ad->t, a);
    if (node_api_create_external_string_latin1(ad->env, (char *)atab_chars(a), atab_len(a),
                                               finalize_chars, ad->t, &v,
                                               &copied) != napi_ok) {
        atab_external_release(ad->t, a);
        return NULL;
    }
    *refs = !copied;
    return v;
}

/* A plain copy: Latin-1 for ASCII, else UTF-8. */
static napi_value copy_string(napi_env env, const atab_atom *a)
{
    napi_value v = NULL;
    if (atab_is_ascii(a))
        napi_create_string_latin1(env, atab_chars(a), atab_len(a), &v);
    else
        napi_create_string_utf8(env, atab_chars(a), atab_len(a), &v);
    return v;
}

/* ---- the host cache: a strong napi_ref per cached string ---- */

static void *cache_create(void *ud, atab_table *t, const atab_atom *a, unsigned *refs)
{
    addon *ad = ud;
    napi_ref ref = NULL;
    (void)t;
    napi_value v = external_string(ad, a, refs);
    if (!v || napi_create_reference(ad->env, v, 1, &ref) != napi_ok)
        return NULL;   /* the string, if made, is garbage: its finalizer runs */
    return ref;
}

static void *cache_hold(void *ud, void *s)
{
    addon *ad = ud;
    napi_value v = NULL;
    napi_get_reference_value(ad->env, (napi_ref)s, &v);
    return v;
}

static void cache_drop(void *ud, void *s)
{
    addon *ad = ud;
    napi_delete_reference(ad->env, (napi_ref)s);
}

/* The atom's one string in this isolate (a copy if the cache fails). */
static napi_value canonical(addon *ad, const atab_atom *a)
{
    napi_value v = atab_host_cache_get(ad->cache, a);
    return v ? v : copy_string(ad->env, a);
}

/* ---- JS strings to atoms ---- */

/* Throws the TypeError for a string with a lone surrogate at unit i. */
static void *throw_surrogate(napi_env env, const char *what, const char16_t *u, size_t i)
{
    char msg[200];
    snprintf(msg, sizeof msg,
             "atomtab.%s: the string has a lone surrogate (U+%04X at index %zu): "
             "it is not Unicode text and cannot be an atom", what, (unsigned)u[i], i);
    napi_throw_type_error(env, "ERR_ATOMTAB_LONE_SURROGATE", msg);
    return NULL;
}

/* The index of the first unpaired surrogate in u[0..n), or n. */
static size_t lone_surrogate(const char16_t *u, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (u[i] >= 0xd800 && u[i] < 0xdc00 && i + 1 < n && u[i + 1] >= 0xdc00 &&
            u[i + 1] < 0xe000)
            i++;   /* a pair */
        else if (u[i] >= 0xd800 && u[i] < 0xe000)
            return i;
    }
    return n;
}

/* The slow path, for strings whose UTF-8 holds U+FFFD: V8 writes that for
** a lone surrogate too, so the UTF-16 decides. */
static const atab_atom *atom_utf16(napi_env env, addon *ad, napi_value s, int insert,
                                   const char *what)
{
    size_t n = 0;
    const atab_atom *a;
    CHECK(env, napi_get_value_string_utf16(env, s, NULL, 0, &n));
    char16_t *u = malloc(2 * n + 2);
    if (!u) {
        napi_throw_error(env, "ERR_ATOMTAB_NOMEM", "atomtab: out of memory");
        return NULL;
    }
    napi_get_value_string_utf16(env, s, u, n + 1, &n);
    size_t bad = lone_surrogate(u, n);
    if (bad < n) {
        throw_surrogate(env, what, u, bad);
        free(u);
        return NULL;
    }
    a = insert ? atab_intern_utf16(ad->t, (const uint16_t *)u, n)
               : atab_lookup_utf16(ad->t, (const uint16_t *)u, n);
    free(u);
    return a;
}

/* The atom for the JS string `s`, with a reference; inserted when `insert`.
** NULL with an exception pending on error; NULL with none for a lookup
** that finds nothing (atab_last_error() is then ATAB_OK). */
static const atab_atom *atom_of(napi_env env, addon *ad, napi_value s, int insert,
                                const char *what)
{
    char stack[256], *buf = stack;
    size_t len = 0;
    const atab_atom *a;
    CHECK(env, napi_get_value_string_utf8(env, s, NULL, 0, &len));
    if (len >= sizeof stack && !(buf = malloc(len + 1))) {
        napi_throw_error(env, "ERR_ATOMTAB_NOMEM", "atomtab: out of memory");
        return NULL;
    }
    napi_get_value_string_utf8(env, s, buf, len + 1, &len);
    if (memmem(buf, len, "\xef\xbf\xbd", 3))   /* U+FFFD: real, or a lone surrogate */
        a = atom_utf16(env, ad, s, insert, what);
    else
        a = insert ? atab_intern(ad->t, buf, len) : atab_lookup(ad->t, buf, len);
    if (buf != stack)
        free(buf);
    if (!a && atab_last_error() != ATAB_OK) {
        bool pending = false;
        napi_is_exception_pending(env, &pending);
        if (!pending)
            throw_atab(env, what);
    }
    return a;
}

/* The one string argument of a function; NULL (TypeError thrown) if not. */
static napi_value string_arg(napi_env env, napi_callback_info info, addon **ad,
                             const char *what)
{
    size_t argc = 1;
    napi_value arg = NULL;
    napi_valuetype type = napi_undefined;
    CHECK(env, napi_get_cb_info(env, info, &argc, &arg, NULL, (void **)ad));
    if (argc < 1 || napi_typeof(env, arg, &type) != napi_ok || type != napi_string) {
        char msg[80];
        snprintf(msg, sizeof msg, "atomtab.%s: the argument must be a string", what);
        napi_throw_type_error(env, "ERR_INVALID_ARG_TYPE", msg);
        return NULL;
    }
    return arg;
}

/* intern(str): the canonical string equal to str (this isolate's one
** string for its atom). */
static napi_value js_intern(napi_env env, napi_callback_info info)
{
    addon *ad;
    napi_value s = string_arg(env, info, &ad, "intern");
    const atab_atom *a = s ? atom_of(env, ad, s, 1, "intern") : NULL;
    if (!a)
        return NULL;
    napi_value v = canonical(ad, a);
    atab_release(ad->t, a);   /* the cached string holds it now */
    return v;
}

/* lookup(str): the canonical string if str is an atom already, else
** undefined. Never inserts. */
static napi_value js_lookup(napi_env env, napi_callback_info info)
{
    addon *ad;
    napi_value v = NULL;
    napi_value s = string_arg(env, info, &ad, "lookup");
    if (!s)
        return NULL;
    const atab_atom *a = atom_of(env, ad, s, 0, "lookup");
    if (!a) {
        bool pending = false;
        napi_is_exception_pending(env, &pending);
        if (!pending)
            napi_get_undefined(env, &v);
        return v;
    }
    v = canonical(ad, a);
    atab_release(ad->t, a);
    return v;
}

/* ---- NativeElement: the benchmark's Element (bench/node-idread.js) ---- */

enum { M_COPY, M_EXTERNAL, M_ATOM };

/* Its id holds an external handle, not a plain reference: the element's
** finalizer may run after the table's last environment freed it. */
typedef struct element {
    addon *ad;
    atab_table *t;
    const atab_atom *id;   /* a handle, or NULL */
    int mode;
} element;

/* The type tag of this copy of the addon's elements. napi_unwrap alone
** cannot tell an element from an object another addon wrapped (every
** addon's wraps share one private key), nor from another copy's element
** (whose table another copy of the library owns: its sentinels and
** per-thread records are not this code's); so the tag's second word is
** an address in this copy. Workers that load this file share it. */
static napi_type_tag element_tag(void)
{
    return (napi_type_tag){0x61746f6d7461622eULL, (uint64_t)(uintptr_t)&proc_table};
}

/* The element `this` is, and the first argument into *arg (when arg is
** not NULL); NULL, with a TypeError thrown, when `this` is not an element
** this copy made. */
static element *this_element(napi_env env, napi_callback_info info, napi_value *arg)
{
    size_t argc = 1;
    napi_value self;
    element *el = NULL;
    bool ours = false;
    napi_type_tag tag = element_tag();
    if (napi_get_cb_info(env, info, &argc, arg, &self, NULL) != napi_ok ||
        napi_check_object_type_tag(env, self, &tag, &ours) != napi_ok || !ours ||
        napi_unwrap(env, self, (void **)&el) != napi_ok) {
        napi_throw_type_error(env, "ERR_INVALID_THIS",
                              "atomtab: Element.id on an object that is not a NativeElement "
                              "of this copy of the addon");
        return NULL;
    }
    return el;
}

static void element_free(node_api_basic_env env, void *data, void *hint)
{
    element *el = data;
    (void)env; (void)hint;
    if (el->id)
        atab_external_release(el->t, el->id);
    free(el);
}

static napi_value element_new(napi_env env, napi_callback_info info)
{
    size_t argc = 1;
    napi_value arg = NULL, self, target = NULL;
    char mode[16] = "copy";
    addon *ad;
    CHECK(env, napi_get_cb_info(env, info, &argc, &arg, &self, (void **)&ad));
    CHECK(env, napi_get_new_target(env, info, &target));
    if (!target) {
        napi_throw_type_error(env, "ERR_CONSTRUCT_CALL_REQUIRED",
                              "atomtab: NativeElement must be called with new");
        return NULL;
    }
    if (argc >= 1 && (napi_get_value_string_utf8(env, arg, mode, sizeof mode, NULL) != napi_ok ||
                      (strcmp(mode, "copy") && strcmp(mode, "external") && strcmp(mode, "atom")))) {
        napi_throw_type_error(env, "ERR_INVALID_ARG_VALUE",
                              "atomtab: NativeElement(mode): mode must be 'copy', 'external' or 'atom'");
        return NULL;
    }
    element *el = calloc(1, sizeof *el);
    if (!el) {
        napi_throw_error(env, "ERR_ATOMTAB_NOMEM", "atomtab: out of memory");
        return NULL;
    }
    el->ad = ad;
    el->t = ad->t;
    el->mode = !strcmp(mode, "external") ? M_EXTERNAL : !strcmp(mode, "atom") ? M_ATOM
                                                                              : M_COPY;
    napi_type_tag tag = element_tag();
    if (napi_type_tag_object(env, self, &tag) != napi_ok ||   /* new, so untagged */
        napi_wrap(env, self, el, element_free, NULL, NULL) != napi_ok) {
        free(el);
        napi_throw_error(env, NULL, "atomtab: cannot make the NativeElement");
        return NULL;
    }
    return self;
}

static napi_value element_get_id(napi_env env, napi_callback_info info)
{
    unsigned refs;
    napi_value v = NULL;
    element *el = this_element(env, info, NULL);
    if (!el)
        return NULL;
    if (!el->id) {
        napi_get_undefined(env, &v);
        return v;
    }
    switch (el->mode) {
    case M_COPY:
        return copy_string(env, el->id);
    case M_EXTERNAL:
        v = external_string(el->ad, el->id, &refs);
        return v ? v : copy_string(env, el->id);
    default:
        return canonical(el->ad, el->id);
    }
}

static napi_value element_set_id(napi_env env, napi_callback_info info)
{
    napi_value arg = NULL;
    element *el = this_element(env, info, &arg);
    if (!el)
        return NULL;
    CHECK(env, napi_coerce_to_string(env, arg, &arg));   /* as el.id = 42 does */
    const atab_atom *a = atom_of(env, el->ad, arg, 1, "Element.id");
    if (!a)
        return NULL;   /* the id stays as it was */
    atab_external_acquire(el->t, a);
    atab_release(el->t, a);
    if (el->id)
        atab_external_release(el->t, el->id);
    el->id = a;
    return NULL;
}

/* ---- stats, gc, report ---- */

static void set_prop(napi_env env, napi_value obj, const char *name, double x)
{
    napi_value v;
    napi_create_double(env, x, &v);
    napi_set_named_property(env, obj, name, v);
}

/* stats(): the table's counts, exact (atab_get_stats flushes caches), and
** this isolate's cached strings. */
static napi_value js_stats(napi_env env, napi_callback_info info)
{
    addon *ad;
    atab_stats st;
    napi_value obj;
    CHECK(env, napi_get_cb_info(env, info, NULL, NULL, NULL, (void **)&ad));
    atab_get_stats(ad->t, &st);
    CHECK(env, napi_create_object(env, &obj));
    set_prop(env, obj, "atoms", (double)st.atoms);
    set_prop(env, obj, "unused", (double)st.unused);
    set_prop(env, obj, "handles", (double)atab_external_handles(ad->t));
    set_prop(env, obj, "cached", (double)atab_host_cache_count(ad->cache));
    set_prop(env, obj, "bytes", (double)st.bytes);
    return obj;
}

/* gc(): trims this isolate's cache, then sweeps; returns the atoms freed. */
static napi_value js_gc(napi_env env, napi_callback_info info)
{
    addon *ad;
    napi_value v;
    CHECK(env, napi_get_cb_info(env, info, NULL, NULL, NULL, (void **)&ad));
    atab_host_cache_trim(ad->cache);
    CHECK(env, napi_create_double(env, (double)atab_gc(ad->t), &v));
    return v;
}

/* A growing buffer for the report's text. */
typedef struct sbuf {
    char *p;
    size_t n, cap;
} sbuf;

static int sbuf_write(void *ud, const char *s, size_t len)
{
    sbuf *b = ud;
    if (b->n + len > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + len)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p)
            return ATAB_ENOMEM;
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, len);
    b->n += len;
    return 0;
}

/* A JS string's UTF-8 in a malloc'd, NUL-terminated buffer; NULL when it
** is not a string or there is no memory. */
static char *dup_utf8(napi_env env, napi_value v)
{
    size_t len;
    char *s;
    if (napi_get_value_string_utf8(env, v, NULL, 0, &len) != napi_ok || !(s = malloc(len + 1)))
        return NULL;
    napi_get_value_string_utf8(env, v, s, len + 1, &len);
    return s;
}

/* The value of one of the library's names ("heap" -> ATAB_KIND_HEAP), or
** -1. index.js has checked the names. */
static int named(napi_env env, napi_value v, const char *const *names, int n)
{
    char buf[16];
    if (napi_get_value_string_utf8(env, v, buf, sizeof buf, NULL) != napi_ok)
        return -1;
    for (int i = 0; i < n; i++)
        if (strcmp(buf, names[i]) == 0)
            return i;
    return -1;
}

/* report()'s options (index.js has checked their types). */
typedef struct report_args {
    bool json;
    char *process;
    atab_report_options o;
    atab_report_entry extra[ATAB_REPORT_EXTRA_MAX];
} report_args;

static void report_args_free(report_args *ra)
{
    free(ra->process);
    free((char *)ra->o.prefix);
    for (size_t i = 0; i < ra->o.n_extra; i++) {
        free((char *)ra->extra[i].path);
        free((char *)ra->extra[i].description);
    }
}

/* obj[name], or NULL (obj is no object, or its getter threw). */
static napi_value prop(napi_env env, napi_value obj, const char *name)
{
    napi_value v = NULL;
    return napi_get_named_property(env, obj, name, &v) == napi_ok ? v : NULL;
}

/* One extra entry, {path, kind, units, amount, description}: 0, or -1 when
** a string cannot be had. */
static int read_entry(napi_env env, napi_value obj, atab_report_entry *x)
{
    static const char *const kinds[] = {"nonheap", "heap", "other"};   /* ATAB_KIND_* */
    static const char *const units[] = {"bytes", "count"};             /* ATAB_UNITS_* */
    napi_value v;
    if (!(v = prop(env, obj, "path")) || !(x->path = dup_utf8(env, v)) ||
        !(v = prop(env, obj, "description")) || !(x->description = dup_utf8(env, v)) ||
        !(v = prop(env, obj, "kind")) || (x->kind = named(env, v, kinds, 3)) < 0 ||
        !(v = prop(env, obj, "units")) || (x->units = named(env, v, units, 2)) < 0 ||
        !(v = prop(env, obj, "amount")))
        return -1;   /* the first that failed (not an object, a getter that threw) */
    return napi_get_value_int64(env, v, &x->amount) == napi_ok ? 0 : -1;
}

/* report(json, process, prefix, extra): 0, or -1 with an exception thrown.
** ra is filled as far as it got (report_args_free frees it). */
static int read_report_args(napi_env env, napi_callback_info info, report_args *ra,
                            addon **ad)
{
    size_t argc = 4;
    napi_value argv[4], x;
    uint32_t n;
    int bad = 0;
    char msg[96];
    if (napi_get_cb_info(env, info, &argc, argv, NULL, (void **)ad) != napi_ok || argc < 4 ||
        napi_get_value_bool(env, argv[0], &ra->json) != napi_ok ||
        napi_get_array_length(env, argv[3], &n) != napi_ok) {
        napi_throw_type_error(env, "ERR_INVALID_ARG_TYPE", "atomtab.report: bad arguments");
        return -1;
    }
    if (n > ATAB_REPORT_EXTRA_MAX) {
        snprintf(msg, sizeof msg, "atomtab.report: at most %d extra entries",
                 ATAB_REPORT_EXTRA_MAX);
        napi_throw_range_error(env, "ERR_INVALID_ARG_VALUE", msg);
        return -1;
    }
    ra->o.extra = ra->extra;
    for (uint32_t i = 0; i < n && !bad; i++) {
        ra->o.n_extra = i + 1;   /* its strings are freed, read or not */
        bad = napi_get_element(env, argv[3], i, &x) != napi_ok ||
              read_entry(env, x, &ra->extra[i]) != 0;
    }
    ra->process = dup_utf8(env, argv[1]);
    ra->o.prefix = dup_utf8(env, argv[2]);
    if (bad || !ra->process || !ra->o.prefix) {
        napi_throw_error(env, "ERR_ATOMTAB", "atomtab.report: cannot read the options");
        return -1;
    }
    return 0;
}

/* The error for options the library refused, with its rules. */
static void throw_bad_options(napi_env env)
{
    char msg[256];
    snprintf(msg, sizeof msg,
             "atomtab.report: the prefix must be '/'-separated non-empty names of at most %d "
             "bytes, and each extra entry needs a path, neither above nor below another "
             "entry's (explicit/ ones heap or nonheap, in bytes)",
             ATAB_REPORT_PREFIX_MAX);
    napi_throw_range_error(env, "ERR_INVALID_ARG_VALUE", msg);
}

/* report(json, process, prefix, extra): the text tree, or about:memory's
** JSON with `process` as every report's process name; the table's paths
** under `prefix`, then the host's `extra` entries (atab_report_options). */
static napi_value js_report(napi_env env, napi_callback_info info)
{
    report_args ra;
    addon *ad;
    napi_value v = NULL;
    sbuf b = {NULL, 0, 0};
    memset(&ra, 0, sizeof ra);
    if (read_report_args(env, info, &ra, &ad) == 0) {
        int rc = ra.json ? atab_report_json_ex(ad->t, ra.process, &ra.o, sbuf_write, &b)
                         : atab_report_tree_ex(ad->t, &ra.o, sbuf_write, &b);
        if (rc == ATAB_OK)
            napi_create_string_utf8(env, b.p ? b.p : "", b.n, &v);
        else if (rc == ATAB_EINVAL)
            throw_bad_options(env);
        else
            napi_throw_error(env, "ERR_ATOMTAB_NOMEM", "atomtab.report: out of memory");
    }
    report_args_free(&ra);
    free(b.p);
    return v;
}

/* ---- the environment's life ---- */

/* At environment teardown, before Node-API finalizes what is left: drops
** this isolate's cached strings and its count on the table. Strings and
** elements finalized later release their handles on the table, which
** waits for them. */
static void env_cleanup(void *arg)
{
    addon *ad = arg;
    atab_host_cache_free(ad->cache);
    table_release();
    free(ad);
}

/* A value property of exports, enumerable (printing the module shows it). */
static napi_property_descriptor exported(const char *name, napi_value v)
{
    napi_property_descriptor d = {name, NULL, NULL, NULL, NULL, v, napi_enumerable, NULL};
    return d;
}

/* The module's exports: the API's named functions, version, and the
** benchmark's NativeElement class. */
static napi_value define_exports(napi_env env, napi_value exports, addon *ad)
{
    static const struct {
        const char *name;
        napi_callback cb;
    } fns[] = {{"intern", js_intern}, {"lookup", js_lookup}, {"stats", js_stats},
               {"gc", js_gc}, {"report", js_report}};
    enum { N_FNS = sizeof fns / sizeof fns[0] };
    napi_property_descriptor d[N_FNS + 2];
    napi_value v;
    for (size_t i = 0; i < N_FNS; i++) {
        CHECK(env, napi_create_function(env, fns[i].name, NAPI_AUTO_LENGTH, fns[i].cb, ad, &v));
        d[i] = exported(fns[i].name, v);
    }
    CHECK(env, napi_create_string_utf8(env, atab_version(), NAPI_AUTO_LENGTH, &v));
    d[N_FNS] = exported("version", v);
    napi_property_descriptor id = {"id", NULL, NULL, element_get_id, element_set_id, NULL,
                                   napi_default, ad};
    CHECK(env, napi_define_class(env, "NativeElement", NAPI_AUTO_LENGTH, element_new, ad,
                                 1, &id, &v));
    d[N_FNS + 1] = exported("NativeElement", v);
    CHECK(env, napi_define_properties(env, exports, N_FNS + 2, d));
    return exports;
}

/* Per environment: a count on the process's table, this isolate's cache,
** and the cleanup hook that gives both back. */
static napi_value init(napi_env env, napi_value exports)
{
    addon *ad = calloc(1, sizeof *ad);
    if (!ad || !(ad->t = table_acquire())) {
        free(ad);
        napi_throw_error(env, NULL, "atomtab: cannot create the table");
        return NULL;
    }
    ad->env = env;
    atab_host_ops ops = {cache_create, cache_hold, cache_drop, ad};
    if (!(ad->cache = atab_host_cache_new(ad->t, &ops)) ||
        napi_add_env_cleanup_hook(env, env_cleanup, ad) != napi_ok) {
        atab_host_cache_free(ad->cache);
        table_release();
        free(ad);
        napi_throw_error(env, NULL, "atomtab: cannot set up the cache");
        return NULL;
    }
    return define_exports(env, exports, ad);
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
