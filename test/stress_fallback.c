/* SPDX-License-Identifier: MIT */
/*
** stress_fallback.c - the end of a table's solo bias when membarrier stops
** serving after the bias was claimed (a sandbox that forbids the barrier
** after start-up), as the state a failed call leaves (atab__writer_fence)
** lets a test set it. Each round: a fresh table; the main thread S claims
** it (its first insert) and then inserts keys of one shard back to back,
** solo inserts with only a compiler fence; membarrier is then marked
** failed; thread M inserts one key of that shard, which ends the bias
** (solo.c: solo_pass), after a random delay. S's solo inserts must never
** overlap M's write to the shard: M's fence has to be one that S's
** inserts take part in (the fallback fence, grace.c), before M trusts
** S's solo_busy.
**
** Two checks a round. At the "insert:solo" pause point (S past its check,
** solo_busy raised), S looks whether the bias is being ended (solo_rec
** cleared under it); if so it stays in its insert a while and counts a
** violation if M's end completes meanwhile (M did not wait for it). Then
** every key is looked up and the shard's count compared with the keys:
** a write beside a solo insert loses a slot or a count.
**
** Without the fallback fence a 2-CPU VM showed 5 rounds of 20,000 with a
** shard's count one short; each round with it costs a kernel global
** barrier (about 13 ms there).
**
** usage: stress_fallback [ROUNDS]   (exit 1 on a violation or a bad table,
**                                    77 where the case cannot arise)
*/
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "atab_int.h"

#define NKEYS 3000   /* keys of one shard; one more for M */
#define SHARD 5
#define SEED 77

static char g_keys[NKEYS + 1][24];
static atab_table *g_t;
static int g_go, g_mdone;
static unsigned g_delay;
static long g_stalls, g_violations;

static void spin_ns(long ns)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do
        clock_gettime(CLOCK_MONOTONIC, &b);
    while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < ns);
}

/* S inside a solo insert: if the bias is being ended around it, M's end
** must not complete while S is still here. */
static void hook(const char *point, const void *arg)
{
    if (strcmp(point, "insert:solo") != 0)
        return;
    atab_table *t = (atab_table *)(uintptr_t)arg;
    if (__atomic_load_n(&t->solo_rec, __ATOMIC_SEQ_CST) == atab__tls_last.rec)
        return;   /* no end under way */
    g_stalls++;
    for (int i = 0; i < 200; i++) {
        if (__atomic_load_n(&t->solo_tid, __ATOMIC_SEQ_CST) == NULL) {
            g_violations++;   /* ended while this insert is in flight */
            spin_ns(200000);
            return;
        }
        spin_ns(1000);
    }
}

static void *m_main(void *arg)
{
    (void)arg;
    while (!__atomic_load_n(&g_go, __ATOMIC_ACQUIRE))
        ;
    for (volatile unsigned i = 0; i < g_delay; i++)
        ;
    const atab_atom *a = atab_intern_cstr(g_t, g_keys[NKEYS]);
    __atomic_store_n(&g_mdone, 1, __ATOMIC_RELEASE);
    return (void *)a;
}

/* Every key interned this round found as its atom, and the shard's count
** equal to the keys in it: 0, else 1 (said on stderr). */
static int check_round(int round, const atab_atom *const *got, int n, const atab_atom *ma)
{
    int bad = 0;
    for (int j = 0; j <= n; j++) {
        const char *k = j < n ? g_keys[j] : g_keys[NKEYS];
        const atab_atom *want = j < n ? got[j] : ma;
        const atab_atom *x = atab_lookup(g_t, k, strlen(k));
        if (x != want)
            bad = 1, fprintf(stderr, "round %d: key %s lost\n", round, k);
        if (x)
            atab_release(g_t, x);
    }
    uint32_t used = g_t->shards[SHARD].used;
    if (used != (uint32_t)(n + 1))
        bad = 1, fprintf(stderr, "round %d: shard count %u, keys %d\n", round, used, n + 1);
    return bad;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 20000;
    if (ATAB__NEVER_MEMBARRIER || !atab__have_membarrier()) {
        printf("stress_fallback: every side fences for itself here: nothing to test\n");
        return 77;
    }
    atab_options o;
    memset(&o, 0, sizeof o);
    o.flags = ATAB_FIXED_SEED;
    o.seed = SEED;
    o.sweep_threshold = SIZE_MAX;
    __atomic_store_n(&atab__test_hook, hook, __ATOMIC_RELEASE);
    g_t = atab_table_new(&o);
    if (!g_t)
        return fprintf(stderr, "stress_fallback: %s\n", atab_strerror(atab_last_error())), 2;
    for (int k = 0, n = 0; n <= NKEYS; k++) {
        char buf[24];
        snprintf(buf, sizeof buf, "k%d", k);
        if (atab__h_shard(atab__table_hash(g_t, buf, strlen(buf))) == SHARD)
            strcpy(g_keys[n++], buf);
    }
    atab_table_free(g_t);
    static const atab_atom *got[NKEYS];
    long bad = 0;
    srand(1);
    for (int round = 0; round < rounds; round++) {
        __atomic_store_n(&atab__membarrier_state, 1, __ATOMIC_SEQ_CST);
        g_t = atab_table_new(&o);
        got[0] = atab_intern_cstr(g_t, g_keys[0]);   /* the claim */
        if (!g_t || !got[0] || g_t->solo_tid != (const void *)&atab__tls_last)
            return fprintf(stderr, "stress_fallback: round %d: no claim\n", round), 2;
        __atomic_store_n(&atab__membarrier_state, -1, __ATOMIC_SEQ_CST);
        g_go = g_mdone = 0;
        g_delay = (unsigned)(rand() % 20000);
        pthread_t m;
        pthread_create(&m, NULL, m_main, NULL);
        int n = 1;
        __atomic_store_n(&g_go, 1, __ATOMIC_RELEASE);
        while (n < NKEYS && !__atomic_load_n(&g_mdone, __ATOMIC_ACQUIRE)) {
            got[n] = atab_intern_cstr(g_t, g_keys[n]);
            n++;
        }
        void *ma;
        pthread_join(m, &ma);
        if (check_round(round, got, n, ma))
            bad++;   /* its table leaked, not freed */
        else
            atab_table_free(g_t);
    }
    __atomic_store_n(&atab__membarrier_state, 1, __ATOMIC_SEQ_CST);
    printf("stress_fallback: %d rounds; S inside a solo insert as the bias ended: %ld; "
           "ended under it (violations): %ld; bad tables: %ld\n",
           rounds, g_stalls, g_violations, bad);
    return g_violations || bad;
}
