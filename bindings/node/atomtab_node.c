/*
** atomtab_node.c - Node-API addon: an Element-like object whose `id` is an
** atom, read back as a copy, a new external string, or the one external
** string cached per atom (atomtab's host cache, held by a napi_ref).
**
** One table per addon instance (per Node environment). Every string made
** here that points at an atom's chars holds an external handle; its
** finalizer releases it. Atoms store UTF-8: an ASCII atom's chars are valid
** Latin-1, so its external string points at them; other atoms get an
** external string over a converted buffer (Latin-1 when every character is
** below 0x100, else UTF-16) that holds the handle too and is freed with it.
*/
#define NAPI_EXPERIMENTAL   /* node_api_create_external_string_* (Node 20) */
#include <node_api.h>
#include <stdlib.h>
#include <string.h>

#include "atomtab.h"

typedef struct addon {
    atab_table *t;
    napi_env env;
    napi_ref element_ctor;
} addon;

enum { M_COPY, M_EXTERNAL, M_ATOM };

typedef struct element {
    addon *ad;
    const atab_atom *id;   /* one reference, or NULL */
    int mode;
} element;

#define CHECK(env, call)                                                   \
    do {                                                                   \
        if ((call) != napi_ok) {                                           \
            napi_throw_error((env), NULL, "atomtab: " #call " failed");    \
            return NULL;                                                   \
        }                                                                  \
    } while (0)

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

/* Decodes UTF-8 (valid: atoms come from JS strings) to UTF-16; returns
** the units written, and *max the largest code unit. */
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

/* ---- Element ---- */

static element *this_element(napi_env env, napi_callback_info info, napi_value *arg)
{
    size_t argc = 1;
    napi_value self;
    element *el = NULL;
    if (napi_get_cb_info(env, info, &argc, arg, &self, NULL) != napi_ok ||
        napi_unwrap(env, self, (void **)&el) != napi_ok)
        return NULL;
    return el;
}

static void element_free(node_api_basic_env env, void *data, void *hint)
{
    element *el = data;
    (void)env; (void)hint;
    if (el->id)
        atab_release(el->ad->t, el->id);
    free(el);
}

static napi_value element_new(napi_env env, napi_callback_info info)
{
    size_t argc = 1;
    napi_value arg = NULL, self;
    char mode[16] = "copy";
    addon *ad;
    CHECK(env, napi_get_cb_info(env, info, &argc, &arg, &self, (void **)&ad));
    if (argc >= 1)
        CHECK(env, napi_get_value_string_utf8(env, arg, mode, sizeof mode, NULL));
    element *el = calloc(1, sizeof *el);
    if (!el) {
        napi_throw_error(env, NULL, "atomtab: out of memory");
        return NULL;
    }
    el->ad = ad;
    el->mode = !strcmp(mode, "external") ? M_EXTERNAL : !strcmp(mode, "atom") ? M_ATOM
                                                                              : M_COPY;
    if (napi_wrap(env, self, el, element_free, NULL, NULL) != napi_ok) {
        free(el);
        napi_throw_error(env, NULL, "atomtab: napi_wrap failed");
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
        v = atab_external_cache_get(el->ad->t, el->id);
        return v ? v : copy_string(env, el->id);
    }
}

static napi_value element_set_id(napi_env env, napi_callback_info info)
{
    napi_value arg = NULL;
    size_t len = 0;
    char stack[256], *buf = stack;
    element *el = this_element(env, info, &arg);
    if (!el)
        return NULL;
    CHECK(env, napi_coerce_to_string(env, arg, &arg));   /* as el.id = 42 does */
    CHECK(env, napi_get_value_string_utf8(env, arg, NULL, 0, &len));
    if (len >= sizeof stack && !(buf = malloc(len + 1))) {
        napi_throw_error(env, NULL, "atomtab: out of memory");
        return NULL;
    }
    napi_get_value_string_utf8(env, arg, buf, len + 1, &len);
    const atab_atom *a = atab_intern(el->ad->t, buf, len);
    if (buf != stack)
        free(buf);
    if (!a) {
        napi_throw_error(env, NULL, atab_strerror(atab_last_error()));
        return NULL;
    }
    if (el->id)
        atab_release(el->ad->t, el->id);
    el->id = a;
    return NULL;
}

/* ---- module functions ---- */

static napi_value set_prop(napi_env env, napi_value obj, const char *name, double x)
{
    napi_value v;
    napi_create_double(env, x, &v);
    napi_set_named_property(env, obj, name, v);
    return obj;
}

/* stats(): the table's counts, exact (atab_get_stats flushes caches). */
static napi_value stats(napi_env env, napi_callback_info info)
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
    set_prop(env, obj, "cached", (double)atab_external_cache_count(ad->t));
    return obj;
}

/* trim(): drops cache entries of otherwise unused atoms; returns how many. */
static napi_value trim(napi_env env, napi_callback_info info)
{
    addon *ad;
    napi_value v;
    CHECK(env, napi_get_cb_info(env, info, NULL, NULL, NULL, (void **)&ad));
    CHECK(env, napi_create_double(env, (double)atab_external_cache_trim(ad->t), &v));
    return v;
}

/* sweep(): atab_gc; returns the atoms freed. */
static napi_value sweep(napi_env env, napi_callback_info info)
{
    addon *ad;
    napi_value v;
    CHECK(env, napi_get_cb_info(env, info, NULL, NULL, NULL, (void **)&ad));
    CHECK(env, napi_create_double(env, (double)atab_gc(ad->t), &v));
    return v;
}

/* At environment teardown: the table defers its free while strings that
** V8 has not finalized yet hold handles. */
static void addon_free(napi_env env, void *data, void *hint)
{
    addon *ad = data;
    (void)hint;
    if (ad->element_ctor)
        napi_delete_reference(env, ad->element_ctor);
    atab_table_free(ad->t);
    free(ad);
}

static napi_value init(napi_env env, napi_value exports)
{
    addon *ad = calloc(1, sizeof *ad);
    napi_value ctor;
    if (!ad || !(ad->t = atab_table_new(NULL))) {
        free(ad);
        napi_throw_error(env, NULL, "atomtab: cannot create the table");
        return NULL;
    }
    ad->env = env;
    atab_host_ops ops = {cache_create, cache_hold, cache_drop, ad};
    if (atab_external_cache_init(ad->t, &ops) != ATAB_OK ||
        napi_set_instance_data(env, ad, addon_free, NULL) != napi_ok) {
        atab_table_free(ad->t);
        free(ad);
        napi_throw_error(env, NULL, "atomtab: cannot set up the cache");
        return NULL;
    }
    napi_property_descriptor props[] = {
        {"id", NULL, NULL, element_get_id, element_set_id, NULL, napi_default, ad},
    };
    CHECK(env, napi_define_class(env, "NativeElement", NAPI_AUTO_LENGTH, element_new, ad,
                                 1, props, &ctor));
    CHECK(env, napi_create_reference(env, ctor, 1, &ad->element_ctor));
    napi_property_descriptor fns[] = {
        {"NativeElement", NULL, NULL, NULL, NULL, ctor, napi_default, NULL},
        {"stats", NULL, stats, NULL, NULL, NULL, napi_default, ad},
        {"trim", NULL, trim, NULL, NULL, NULL, napi_default, ad},
        {"sweep", NULL, sweep, NULL, NULL, NULL, napi_default, ad},
    };
    CHECK(env, napi_define_properties(env, exports, 4, fns));
    return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
