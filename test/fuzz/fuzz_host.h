/* SPDX-License-Identifier: MIT */
/*
** fuzz_host.h - fuzz_table.c's host caches (atab_host_cache_*), included by
** it after its model: a fake host whose strings are malloc'd records, some
** external (holding a handle on their atom, released through
** atab_external_finalize or its Node-API twin when the host "collects"
** them), and the model of what each cache holds.
**
** What is checked: a cache hands out the same string for an atom for as
** long as its entry lives (ops.create once per miss, ops.hold once per
** get); its entries hold one reference on the atom and the string's
** handle, both in the model's exact counts; atab_host_cache_trim drops
** exactly the entries whose atom has no reference but caches' (counted
** over both caches), and static atoms' never; a miss past 1024 entries
** may trim first, and then leaves none of those; clear and free drop
** every entry; a failed create or allocation caches nothing.
*/
#ifndef FUZZ_HOST_H
#define FUZZ_HOST_H

#define HSTR_MAGIC 0x68737472u
#define HC_TRIM_MIN 1024   /* a miss trims first only past this many entries */
#define HC_HEAVY_MAX 16    /* sub-operations that visit every entry, per input */

/* hcache_m.mode */
#define HC_EXTERNAL 1u     /* strings take external handles */
#define HC_FAILING 2u      /* every third ops.create fails */
#define HC_COLLECT_NOW 4u  /* a dropped string is collected at once */

/* Collects a dropped string: its finalizer releases its handle (through
** one adapter or the other), then it is freed. After atab_table_free
** the model is done with, but the handle's release is the table's last
** word: it may free the table. */
static void hstr_collect(model *m, hstr *s)
{
    void *chars = (void *)(uintptr_t)atab_chars(s->a);
    if (s->external && s->napi)
        atab_external_finalize_napi(NULL, chars, m->t);
    else if (s->external)
        atab_external_finalize(chars, m->t);
    if (s->refs && !m->closing) {
        model_ent *e = &m->e[s->ent];
        e->pend_refs--;
        m->handles--;
        model_unref(m, e);
    }
    s->magic = 0;
    free(s);
}

/* Collects every dropped string; returns 1 when one released a handle
** (as step()). */
static int hc_collect_all(model *m)
{
    int released = 0;
    while (m->pending) {
        hstr *s = m->pending;
        m->pending = s->next;
        released |= s->refs != 0;
        hstr_collect(m, s);
    }
    return released;
}

static void *hc_create(void *ud, atab_table *t, const atab_atom *a, unsigned *string_refs)
{
    hcache_m *h = ud;
    model *m = h->m;
    model_ent *e = m->creating;
    CHECK(t == m->t && !m->closing);
    CHECK(atab_is_static(a) ? e == NULL : (e != NULL && e->a == a));
    if ((h->mode & HC_FAILING) && ++h->creates % 3 == 0) {   /* the host is out of memory */
        m->create_failed = 1;
        return NULL;
    }
    hstr *s = calloc(1, sizeof *s);
    CHECK(s != NULL);
    s->magic = HSTR_MAGIC;
    s->cache = (unsigned)(h - m->hc);
    s->a = a;
    s->ent = e ? (long)(e - m->e) : -1;
    s->napi = (unsigned)(++m->strings & 1);   /* which finalizer collects it */
    if (h->mode & HC_EXTERNAL) {
        CHECK(atab_external_acquire(t, a) == a);
        s->external = 1;
        s->refs = e != NULL;   /* a static atom's handle holds nothing */
    }
    if (s->refs) {
        e->host_refs++;
        m->handles++;
        model_ref(m, e);
    }
    *string_refs = s->refs;
    m->created = s;
    return s;
}

static void *hc_hold(void *ud, void *sv)
{
    hstr *s = sv;
    (void)ud;
    CHECK(s->magic == HSTR_MAGIC);
    s->holds++;
    return s;
}

static size_t hc_static_index(const hcache_m *h, const atab_atom *a)
{
    size_t i = 0;
    while (i < h->ns && h->sa[i] != a)
        i++;
    return i;   /* h->ns: none */
}

/* The cache lets go of a string: its entry is gone, the cache's reference
** released; the string (and its handle) lives until the host collects it. */
static void hc_drop(void *ud, void *sv)
{
    hcache_m *h = ud;
    model *m = h->m;
    hstr *s = sv;
    CHECK(s->magic == HSTR_MAGIC && s->cache == (unsigned)(h - m->hc));
    m->drops++;
    h->n--;
    if (s->ent >= 0) {
        model_ent *e = &m->e[s->ent];
        CHECK(e->host[s->cache] == s);
        if (m->in_trim)   /* no holder but caches (model counts: before this drop) */
            CHECK(e->count == e->host_refs);
        e->host[s->cache] = NULL;
        e->host_refs -= 1 + (long)s->refs;
        e->pend_refs += (long)s->refs;
        model_unref(m, e);   /* the cache's own reference */
    } else {
        size_t i = hc_static_index(h, s->a);
        CHECK(!m->in_trim && i < h->ns && h->ss[i] == s);   /* never trimmed */
        h->sa[i] = h->sa[h->ns - 1];
        h->ss[i] = h->ss[--h->ns];
    }
    if ((h->mode & HC_COLLECT_NOW) && !m->closing) {
        hstr_collect(m, s);
    } else {
        s->next = m->pending;
        m->pending = s;
    }
}

/* After a trim: no entry of cache i is left whose atom only caches hold. */
static void hc_none_unused(model *m, unsigned i)
{
    for (size_t k = 0; k < m->n; k++) {
        model_ent *e = &m->e[k];
        CHECK(!e->host[i] || e->count > e->host_refs);
    }
}

static void hc_new(atab_table *t, model *m, unsigned i, unsigned b)
{
    hcache_m *h = &m->hc[i];
    atab_host_ops ops = {hc_create, (b & 1) ? hc_hold : NULL, hc_drop, h};
    atab_host_ops no_drop = ops;
    if (h->c)
        return;
    no_drop.drop = NULL;
    CHECK(atab_host_cache_new(t, &no_drop) == NULL && atab_last_error() == ATAB_EINVAL);
    CHECK(atab_host_cache_new(NULL, &ops) == NULL && atab_last_error() == ATAB_EINVAL);
    memset(h, 0, sizeof *h);
    h->m = m;
    h->hold = (b & 1) != 0;
    h->mode = b >> 1;
    if (!(h->c = atab_host_cache_new(t, &ops))) {
        atab_status err = atab_last_error();
        CHECK(m->may_fail && (err == ATAB_ENOMEM || err == ATAB_ELIMIT));
        return;
    }
    CHECK(atab_host_cache_count(h->c) == 0 && atab_host_cache_trim(h->c) == 0);
}

/* atab_host_cache_get of a (e its entry, NULL for a static atom), which
** some holder keeps alive. */
static void hc_get(model *m, unsigned i, const atab_atom *a, model_ent *e)
{
    hcache_m *h = &m->hc[i];
    size_t si = e ? 0 : hc_static_index(h, a);
    hstr *want = e ? e->host[i] : si < h->ns ? h->ss[si] : NULL;
    if (!h->c || (!e && !want && h->ns == HC_STATICS))
        return;
    unsigned holds = want ? want->holds : 0;
    size_t before = h->n;
    m->created = NULL, m->creating = e, m->create_failed = 0, m->drops = 0;
    m->in_trim = 1;   /* a miss may trim first */
    void *r = atab_host_cache_get(h->c, a);
    m->in_trim = 0;
    if (want) {   /* a hit: the same string, through hold once */
        CHECK(r == want && !m->created && !m->create_failed && m->drops == 0);
        CHECK(want->holds == holds + (unsigned)h->hold);
        return;
    }
    CHECK(m->drops == 0 || before >= HC_TRIM_MIN);
    if (m->drops)
        hc_none_unused(m, i);
    if (!r) {   /* nothing cached, nothing lost */
        atab_status err = atab_last_error();
        CHECK(!m->created);
        CHECK(m->create_failed ? err == ATAB_ENOMEM
                               : m->may_fail && (err == ATAB_ENOMEM || err == ATAB_ELIMIT));
    } else {
        hstr *s = m->created;
        CHECK(s != NULL && r == s && s->a == a && s->holds == (unsigned)h->hold);
        h->n++;
        if (e) {
            e->host[i] = s;
            e->host_refs++;
            model_ref(m, e);   /* the cache's own reference */
        } else {
            h->sa[h->ns] = a;
            h->ss[h->ns++] = s;
        }
    }
    CHECK(atab_host_cache_count(h->c) == h->n);
}

/* An atom to read through a cache, by b: a static atom of a registered
** set (the atom the table gives for its string), or an atom that some
** holder keeps (count > 0). NULL: none. */
static const atab_atom *hc_pick(model *m, unsigned b, model_ent **ep)
{
    *ep = NULL;
    if ((b & 1) && m->n_sets) {
        const atab_static_set *set = all_sets[m->set_ids[(b >> 1) % m->n_sets]];
        const atab_atom *sa = set_atom(set, (b >> 1) * 7u);
        return sa ? static_for(m, atab_chars(sa), atab_len(sa)) : NULL;
    }
    for (size_t k = 0; k < m->n; k++) {
        model_ent *e = &m->e[(b / 2 + k) % m->n];
        if (e->present && e->count > 0) {
            *ep = e;
            return e->a;
        }
    }
    return NULL;
}

static void hc_trim(model *m, unsigned i)
{
    hcache_m *h = &m->hc[i];
    size_t unused = 0;
    for (size_t k = 0; k < m->n; k++)
        unused += m->e[k].host[i] && m->e[k].count == m->e[k].host_refs;
    m->drops = 0;
    m->in_trim = 1;
    size_t r = atab_host_cache_trim(h->c);
    m->in_trim = 0;
    CHECK(r == unused && m->drops == r);
    CHECK(atab_host_cache_count(h->c) == h->n);
    hc_none_unused(m, i);
}

/* Clears (free 0) or frees cache i: every entry dropped. */
static void hc_clear(model *m, unsigned i, int free_it)
{
    hcache_m *h = &m->hc[i];
    size_t n = h->n;
    m->drops = 0;
    if (free_it) {
        atab_host_cache_free(h->c);
        h->c = NULL;
    } else {
        CHECK(atab_host_cache_clear(h->c) == n);
        CHECK(atab_host_cache_count(h->c) == 0);
    }
    CHECK(m->drops == n && h->n == 0 && h->ns == 0);
}

/* OP_HOST_CACHE: sub-operation b % 8 on cache (b >> 3) % 2: new (with
** the next byte's options), get (an atom by the next byte), trim, clear,
** free, collect the dropped strings, get every held atom. Returns 1 when
** a reference was released (as step()). */
static int op_host_cache(atab_table *t, model *m, reader *r)
{
    unsigned b, x = 0;
    model_ent *e;
    const atab_atom *a;
    if (!rd(r, &b))
        return 0;
    unsigned i = (b >> 3) % HC_MAX;
    hcache_m *h = &m->hc[i];
    if (b % 8 == 0) {
        rd(r, &x);
        hc_new(t, m, i, x);
        return 0;
    }
    if (b % 8 == 6)
        return hc_collect_all(m);
    if (!h->c)
        return 0;
    switch (b % 8) {
    case 1:
    case 2:
        if (rd(r, &x) && (a = hc_pick(m, x, &e)) != NULL)
            hc_get(m, i, a, e);
        return 0;
    case 3:
        if (m->hc_heavy++ < HC_HEAVY_MAX)
            hc_trim(m, i);
        return 1;
    case 4:
    case 5:
        hc_clear(m, i, b % 8 == 5);
        return 1;
    default:   /* every atom some holder keeps, then every static one again */
        if (m->hc_heavy++ >= HC_HEAVY_MAX)
            return 0;
        for (size_t k = 0; k < m->n && h->c; k++)
            if (m->e[k].present && m->e[k].count > 0)
                hc_get(m, i, m->e[k].a, &m->e[k]);
        for (size_t k = 0; k < h->ns; k++)
            hc_get(m, i, h->sa[k], NULL);
        return 1;   /* a trim may have released */
    }
}

/* The end of an input: frees the caches (unless they are left to
** atab_table_free) and collects the dropped strings. */
static void hc_finish(model *m)
{
    for (unsigned i = 0; i < HC_MAX && !m->leave_caches; i++)
        if (m->hc[i].c)
            hc_clear(m, i, 1);
    hc_collect_all(m);
}

#endif /* FUZZ_HOST_H */
