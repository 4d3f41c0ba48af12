/*
 * npsort.c - np.argsort (kind 'quicksort', the default) as NumPy's variants
 * compute it, down to the order of equal keys ("NumPy's argsort" in
 * detfeed.h):
 *
 *   scalar   npysort's aquicksort: introsort on the index array.
 *   avx2     x86-simd-sort's argsort (xss-common-argsort.h, as NumPy 2.x
 *   avx512   vendors it) with 4 or 8 lanes: a vectorized quicksort whose
 *            base case is a bitonic network of up to 256 keys, falling
 *            back to the C++ library's std::sort (libstdc++'s, as NumPy's
 *            Linux wheels are built) for NaN keys and for deep recursions.
 *
 * Every variant only compares keys, never computes with them, so the keys
 * are first mapped to unsigned 64-bit integers of the same order, equal
 * where the dtype's values compare equal (key_of_f32 and friends), and one
 * implementation of each algorithm serves every dtype.
 */
#include "npsort.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- keys ----------------------------------------------------------------- */

/* A float's key: the bits of a positive value with the sign bit set, those
 * of a negative one inverted, so the unsigned order is the float order;
 * -0.0 becomes +0.0 (they are equal) and every NaN UINT64_MAX, above
 * +inf and equal to each other: where NaNs are sorted at all (NumPy's
 * scalar comparison, x86-simd-sort's std::sort fallback) they go last and
 * never compare less than one another. */
static uint64_t key_of_f32(float v, bool *nan)
{
    if (isnan(v)) {
        *nan = true;
        return UINT64_MAX;
    }
    uint32_t u;
    v = v == 0.0f ? 0.0f : v;
    memcpy(&u, &v, sizeof u);
    return (u >> 31) ? (uint64_t)(uint32_t)~u : (uint64_t)(u | 0x80000000u);
}

static uint64_t key_of_f64(double v, bool *nan)
{
    if (isnan(v)) {
        *nan = true;
        return UINT64_MAX;
    }
    uint64_t u;
    v = v == 0.0 ? 0.0 : v;
    memcpy(&u, &v, sizeof u);
    return (u >> 63) ? ~u : u | ((uint64_t)1 << 63);
}

/* k[i] = the key of keys[i]; *nan whether a float key is NaN. */
static void map_keys(const void *keys, detfeed_numpy_dtype type, int n, uint64_t *k,
                     bool *nan)
{
    const uint64_t sign32 = (uint64_t)1 << 31, sign64 = (uint64_t)1 << 63;
    *nan = false;
    for (int i = 0; i < n; i++) {
        switch (type) {
        case DETFEED_NUMPY_INT32:
            k[i] = (uint64_t)(uint32_t)((const int32_t *)keys)[i] ^ sign32;
            break;
        case DETFEED_NUMPY_UINT32:
            k[i] = ((const uint32_t *)keys)[i];
            break;
        case DETFEED_NUMPY_INT64:
            k[i] = (uint64_t)((const int64_t *)keys)[i] ^ sign64;
            break;
        case DETFEED_NUMPY_UINT64:
            k[i] = ((const uint64_t *)keys)[i];
            break;
        case DETFEED_NUMPY_FLOAT32:
            k[i] = key_of_f32(((const float *)keys)[i], nan);
            break;
        case DETFEED_NUMPY_FLOAT64:
            k[i] = key_of_f64(((const double *)keys)[i], nan);
            break;
        }
    }
}

static void swap_int(int *a, int *b)
{
    int t = *a;
    *a = *b;
    *b = t;
}

/* ---- scalar: npysort's aquicksort ------------------------------------------ */

/* aheapsort, the depth-limit fallback, on a[1 .. n] (1-based). */
static void np_sift(const uint64_t *k, int *a, int i, int n, int tmp)
{
    for (int j = i << 1; j <= n; i = j, j += j) {
        if (j < n && k[a[j]] < k[a[j + 1]])
            j += 1;
        if (!(k[tmp] < k[a[j]]))
            break;
        a[i] = a[j];
    }
    a[i] = tmp;
}

static void np_heapsort(const uint64_t *k, int *idx, int n)
{
    int *a = idx - 1;
    for (int l = n >> 1; l > 0; --l)
        np_sift(k, a, l, n, a[l]);
    while (n > 1) {
        int tmp = a[n];
        a[n] = a[1];
        n -= 1;
        np_sift(k, a, 1, n, tmp);
    }
}

/* One partition of pl .. pr: median of three (pl, middle, pr) parked at
 * pr - 1, Hoare's scan from both ends; returns the pivot's place. */
static int *np_partition(const uint64_t *k, int *pl, int *pr)
{
    int *pm = pl + ((pr - pl) >> 1);
    if (k[*pm] < k[*pl])
        swap_int(pm, pl);
    if (k[*pr] < k[*pm])
        swap_int(pr, pm);
    if (k[*pm] < k[*pl])
        swap_int(pm, pl);
    uint64_t vp = k[*pm];
    int *pi = pl, *pj = pr - 1;
    swap_int(pm, pj);
    for (;;) {
        do
            ++pi;
        while (k[*pi] < vp);
        do
            --pj;
        while (vp < k[*pj]);
        if (pi >= pj)
            break;
        swap_int(pi, pj);
    }
    swap_int(pi, pr - 1);
    return pi;
}

static void np_insertion(const uint64_t *k, int *pl, int *pr)
{
    for (int *pi = pl + 1; pi <= pr; ++pi) {
        int vi = *pi, *pj = pi;
        while (pj > pl && k[vi] < k[*(pj - 1)]) {
            *pj = *(pj - 1);
            pj--;
        }
        *pj = vi;
    }
}

/* Partitions down to 16 elements, the larger side of each partition on an
 * explicit stack, each stack entry with its own depth budget (2 log2(n)
 * levels, then heapsort); insertion sort finishes each small run. */
static void np_aquicksort(const uint64_t *k, int *idx, int n)
{
    enum { SMALL = 15, STACK = 128 };
    int *stack[STACK], **sp = stack, depth[STACK], *dp = depth;
    int cdepth = 0;
    for (unsigned u = (unsigned)n; u >>= 1;)
        cdepth++;
    cdepth *= 2;
    int *pl = idx, *pr = idx + n - 1;
    for (;;) {
        if (cdepth < 0) {
            np_heapsort(k, pl, (int)(pr - pl + 1));
        } else {
            while (pr - pl > SMALL) {
                int *pi = np_partition(k, pl, pr);
                if (pi - pl < pr - pi) {
                    *sp++ = pi + 1;
                    *sp++ = pr;
                    pr = pi - 1;
                } else {
                    *sp++ = pl;
                    *sp++ = pi - 1;
                    pl = pi + 1;
                }
                *dp++ = --cdepth;
            }
            np_insertion(k, pl, pr);
        }
        if (sp == stack)
            break;
        pr = *(--sp);
        pl = *(--sp);
        cdepth = *(--dp);
    }
}

/* ---- std::sort as libstdc++ has it ----------------------------------------- */

/* libstdc++'s introsort: median of (first + 1, middle, last - 1) moved to
 * first, an unguarded partition, recursion on the right part, a heapsort
 * (make_heap, sort_heap) past 2 floor(log2(n)) levels, and one insertion
 * sort over everything at the end (guarded over the first 16). */
static bool std_less(const uint64_t *k, int a, int b)
{
    return k[a] < k[b];
}

static void std_median_to_first(const uint64_t *k, int *res, int *a, int *b, int *c)
{
    int *m;
    if (std_less(k, *a, *b))
        m = std_less(k, *b, *c) ? b : std_less(k, *a, *c) ? c : a;
    else
        m = std_less(k, *a, *c) ? a : std_less(k, *b, *c) ? c : b;
    swap_int(res, m);
}

static int *std_partition(const uint64_t *k, int *first, int *last, int *pivot)
{
    for (;;) {
        while (std_less(k, *first, *pivot))
            ++first;
        --last;
        while (std_less(k, *pivot, *last))
            --last;
        if (!(first < last))
            return first;
        swap_int(first, last);
        ++first;
    }
}

static void std_adjust_heap(const uint64_t *k, int *first, ptrdiff_t hole,
                            ptrdiff_t len, int value)
{
    const ptrdiff_t top = hole;
    ptrdiff_t child = hole;
    while (child < (len - 1) / 2) {
        child = 2 * (child + 1);
        if (std_less(k, first[child], first[child - 1]))
            child--;
        first[hole] = first[child];
        hole = child;
    }
    if ((len & 1) == 0 && child == (len - 2) / 2) {
        child = 2 * (child + 1);
        first[hole] = first[child - 1];
        hole = child - 1;
    }
    for (ptrdiff_t parent = (hole - 1) / 2;
         hole > top && std_less(k, first[parent], value); parent = (hole - 1) / 2) {
        first[hole] = first[parent];
        hole = parent;
    }
    first[hole] = value;
}

static void std_heapsort(const uint64_t *k, int *first, ptrdiff_t len)
{
    if (len >= 2)
        for (ptrdiff_t parent = (len - 2) / 2;; parent--) {
            std_adjust_heap(k, first, parent, len, first[parent]);
            if (parent == 0)
                break;
        }
    for (; len > 1; len--) {
        int value = first[len - 1];
        first[len - 1] = first[0];
        std_adjust_heap(k, first, 0, len - 1, value);
    }
}

static void std_introsort(const uint64_t *k, int *first, int *last, int depth)
{
    while (last - first > 16) {
        if (depth == 0) {
            std_heapsort(k, first, last - first);
            return;
        }
        --depth;
        int *mid = first + (last - first) / 2;
        std_median_to_first(k, first, first + 1, mid, last - 1);
        int *cut = std_partition(k, first + 1, last, first);
        std_introsort(k, cut, last, depth);
        last = cut;
    }
}

/* Inserts *i into the sorted run before it, with no lower bound check. */
static void std_linear_insert(const uint64_t *k, int *i)
{
    int v = *i;
    for (; std_less(k, v, i[-1]); i--)
        *i = i[-1];
    *i = v;
}

static void std_insertion(const uint64_t *k, int *first, int *last)
{
    for (int *i = first + 1; i < last; ++i) {
        if (std_less(k, *i, *first)) {
            int v = *i;
            memmove(first + 1, first, (size_t)(i - first) * sizeof *first);
            *first = v;
        } else {
            std_linear_insert(k, i);
        }
    }
}

static void std_sort(const uint64_t *k, int *first, ptrdiff_t len)
{
    if (len <= 1)
        return;
    int lg = 0;
    for (ptrdiff_t u = len; u >>= 1;)
        lg++;
    std_introsort(k, first, first + len, 2 * lg);
    if (len > 16) {
        std_insertion(k, first, first + 16);
        for (int *i = first + 16; i < first + len; ++i)
            std_linear_insert(k, i);
    } else {
        std_insertion(k, first, first + len);
    }
}

/* ---- x86-simd-sort ---------------------------------------------------------- */

/*
 * x86-simd-sort's argsort on the index array `arg`, `lanes` keys to a
 * vector (4 with AVX2, 8 with AVX-512; 32-bit keys travel in half-width
 * vectors beside 64-bit indices, so 64- and 32-bit keys take the same
 * path). Lane j of a vector loaded at position p is arg[p + j].
 */
typedef struct xss {
    const uint64_t *k;
    int *arg;
    int lanes;
    bool avx512; /* partition by compress stores (AVX-512) or by permuted
                    whole-vector stores (AVX2) */
} xss;

enum { XSS_NET = 256, XSS_UNROLL = 4, XSS_MAX_LANES = 8 };

/* The network's compare-exchange: both keys' places keep their index
 * unless the first key is greater (min and max, then each lane keeps its
 * index where its key did not change), so equal keys never move. */
static void net_cx(uint64_t *key, int *idx, int a, int b)
{
    if (key[a] > key[b]) {
        uint64_t t = key[a];
        key[a] = key[b], key[b] = t;
        swap_int(&idx[a], &idx[b]);
    }
}

/* One layer inside vector v: lane l against lane l ^ m, the lower lane
 * taking the minimum (m = s - 1 reverses groups of s lanes, m = s / 2
 * swaps their halves). */
static void net_layer(uint64_t *key, int *idx, int lanes, int v, int m)
{
    for (int l = 0; l < lanes; l++)
        if (l < (l ^ m))
            net_cx(key, idx, v * lanes + l, v * lanes + (l ^ m));
}

/* sort_reg: the bitonic sorter of one vector (stages of 2, 4, ... lanes,
 * each a reversal then half swaps). */
static void net_sort_vec(uint64_t *key, int *idx, int lanes, int v)
{
    for (int s = 2; s <= lanes; s *= 2) {
        net_layer(key, idx, lanes, v, s - 1);
        for (int h = s / 4; h >= 1; h /= 2)
            net_layer(key, idx, lanes, v, h);
    }
}

/* bitonic_merge_reg: the half cleaners of one vector. */
static void net_merge_vec(uint64_t *key, int *idx, int lanes, int v)
{
    for (int h = lanes / 2; h >= 1; h /= 2)
        net_layer(key, idx, lanes, v, h);
}

/* bitonic_merge_n_vec of vectors b .. b + nv - 1 (each sorted, both halves
 * sorted): vector i against the reversed vector nv - 1 - i, then the half
 * cleaners across vectors, then inside each. */
static void net_merge(uint64_t *key, int *idx, int lanes, int b, int nv)
{
    for (int i = 0; i < nv / 2; i++)
        for (int l = 0; l < lanes; l++)
            net_cx(key, idx, (b + i) * lanes + l,
                   (b + nv - 1 - i) * lanes + lanes - 1 - l);
    for (int num = nv / 2; num >= 2; num /= 2)
        for (int j = 0; j < nv; j += num)
            for (int i = 0; i < num / 2; i++)
                for (int l = 0; l < lanes; l++)
                    net_cx(key, idx, (b + j + i) * lanes + l,
                           (b + j + i + num / 2) * lanes + l);
    for (int i = 0; i < nv; i++)
        net_merge_vec(key, idx, lanes, b + i);
}

/* argsort_n: the n <= 256 indices at arg through the smallest power-of-two
 * count of vectors over which they fill more than half. The lanes past n
 * hold a key no smaller than any other (x86-simd-sort loads the dtype's
 * largest value there), which never moves down (ties never swap), so the
 * stores of the first n lanes take only real indices. */
static void xss_network(const xss *s, int *arg, int n)
{
    uint64_t key[XSS_NET];
    int idx[XSS_NET];
    int nv = XSS_NET / s->lanes;
    while (nv > 1 && n * 2 <= nv * s->lanes)
        nv /= 2;
    for (int p = 0; p < nv * s->lanes; p++) {
        idx[p] = p < n ? arg[p] : -1;
        key[p] = p < n ? s->k[arg[p]] : UINT64_MAX;
    }
    for (int v = 0; v < nv; v++)
        net_sort_vec(key, idx, s->lanes, v);
    for (int per = 2; per <= nv; per *= 2)
        for (int b = 0; b < nv; b += per)
            net_merge(key, idx, s->lanes, b, per);
    memcpy(arg, idx, (size_t)n * sizeof *arg);
}

/* get_pivot_64bit: the median (upper of the middle two) of the keys at
 * left + j * ((right - left) / lanes), j = 1 .. lanes (right inclusive). */
static uint64_t xss_pivot(const xss *s, size_t left, size_t right)
{
    uint64_t v[XSS_MAX_LANES];
    size_t step = (right - left) / (size_t)s->lanes;
    for (int j = 0; j < s->lanes; j++) {
        uint64_t x = s->k[s->arg[left + (size_t)(j + 1) * step]];
        int i = j;
        for (; i > 0 && v[i - 1] > x; i--)
            v[i] = v[i - 1];
        v[i] = x;
    }
    return v[s->lanes / 2];
}

/* partition_vec: the vector `vec` (lanes indices) split around the pivot
 * into the free places at l_store (keys below it) and before
 * r_store + lanes (the others). AVX-512 compress-stores each part in lane
 * order; AVX2 permutes the vector to the keys below in lane order, then
 * the others in reverse lane order, and stores it whole at l_store and
 * then at r_store. Returns how many keys were not below the pivot. */
static int xss_part_vec(const xss *s, size_t l_store, size_t r_store, const int *vec,
                        uint64_t pivot)
{
    int lo[XSS_MAX_LANES], hi[XSS_MAX_LANES], nlo = 0, nhi = 0;
    for (int j = 0; j < s->lanes; j++) {
        if (s->k[vec[j]] >= pivot)
            hi[nhi++] = vec[j];
        else
            lo[nlo++] = vec[j];
    }
    if (s->avx512) {
        memcpy(s->arg + l_store, lo, (size_t)nlo * sizeof *lo);
        memcpy(s->arg + r_store + (size_t)(s->lanes - nhi), hi,
               (size_t)nhi * sizeof *hi);
    } else {
        int perm[XSS_MAX_LANES];
        memcpy(perm, lo, (size_t)nlo * sizeof *lo);
        for (int j = 0; j < nhi; j++)
            perm[s->lanes - 1 - j] = hi[j];
        memcpy(s->arg + l_store, perm, (size_t)s->lanes * sizeof *perm);
        memcpy(s->arg + r_store, perm, (size_t)s->lanes * sizeof *perm);
    }
    return nhi;
}

/* The store places of argpartition_unrolled as it goes. */
typedef struct xss_stores {
    size_t l, r;
} xss_stores;

static void xss_store(const xss *s, xss_stores *st, const int *vec, uint64_t pivot)
{
    int nhi = xss_part_vec(s, st->l, st->r, vec, pivot);
    st->l += (size_t)(s->lanes - nhi);
    st->r -= (size_t)nhi;
}

/* argpartition_unrolled (4 vectors a step) of arg[left .. right - 1] with
 * right - left > 8 * 4 * lanes, around `pivot`: the first (right - left) %
 * (4 lanes) places one by one (a key not below the pivot swapped to the
 * end), then 4 vectors from each end held back, then 4 vectors at a time
 * from the end that has fewer places stored, the held ones last. Returns
 * where the keys not below the pivot begin. */
static size_t xss_partition(const xss *s, size_t left, size_t right, uint64_t pivot)
{
    const size_t L = (size_t)s->lanes, U = XSS_UNROLL;
    for (size_t i = (right - left) % (U * L); i > 0; --i) {
        if (!(s->k[s->arg[left]] < pivot))
            swap_int(&s->arg[left], &s->arg[--right]);
        else
            ++left;
    }
    int held[2 * XSS_UNROLL * XSS_MAX_LANES], cur[XSS_UNROLL * XSS_MAX_LANES];
    memcpy(held, s->arg + left, U * L * sizeof *held);
    memcpy(held + U * L, s->arg + right - U * L, U * L * sizeof *held);
    xss_stores st = {left, right - L};
    left += U * L;
    right -= U * L;
    while (right != left) {
        if ((st.r + L) - right < left - st.l) {
            right -= U * L;
            memcpy(cur, s->arg + right, U * L * sizeof *cur);
        } else {
            memcpy(cur, s->arg + left, U * L * sizeof *cur);
            left += U * L;
        }
        for (size_t v = 0; v < U; v++)
            xss_store(s, &st, cur + v * L, pivot);
    }
    for (size_t v = 0; v < 2 * U; v++)
        xss_store(s, &st, held + v * L, pivot);
    return st.l;
}

/* argsort_ on arg[left .. right] (inclusive). */
static void xss_sort(const xss *s, size_t left, size_t right, size_t max_iters)
{
    if (max_iters == 0) { /* quicksort is not making progress */
        std_sort(s->k, s->arg + left, (ptrdiff_t)(right + 1 - left));
        return;
    }
    if (right + 1 - left <= XSS_NET) {
        xss_network(s, s->arg + left, (int)(right + 1 - left));
        return;
    }
    uint64_t pivot = xss_pivot(s, left, right), lo = UINT64_MAX, hi = 0;
    for (size_t i = left; i <= right; i++) {
        uint64_t x = s->k[s->arg[i]];
        lo = x < lo ? x : lo;
        hi = x > hi ? x : hi;
    }
    size_t p = xss_partition(s, left, right + 1, pivot);
    if (pivot != lo)
        xss_sort(s, left, p - 1, max_iters - 1);
    if (pivot != hi)
        xss_sort(s, p, right, max_iters - 1);
}

/* xss_argsort: NaN keys hand the whole array to std::sort (NaNs last); a
 * sorted array (non-decreasing in array order) is left as it is; anything
 * else goes to the quicksort with 2 floor(log2(n)) levels. */
static void xss_argsort(const uint64_t *k, int *idx, int n, bool nan, int lanes,
                        bool avx512)
{
    if (nan) {
        std_sort(k, idx, n);
        return;
    }
    int i = 1;
    while (i < n && !(k[i] < k[i - 1]))
        i++;
    if (i == n)
        return;
    xss s = {k, idx, lanes, avx512};
    xss_sort(&s, 0, (size_t)n - 1, 2 * (size_t)log2((double)n));
}

/* ---- the variants ----------------------------------------------------------- */

int detfeed__np_argsort(const void *keys, detfeed_numpy_dtype type, int n, int *idx,
                        detfeed_numpy_sort variant)
{
    if (n < 0 || (unsigned)type > DETFEED_NUMPY_FLOAT64 ||
        (unsigned)variant > DETFEED_NUMPY_SORT_AVX512)
        return DETFEED_EINVAL;
    for (int i = 0; i < n; i++)
        idx[i] = i;
    if (n < 2)
        return DETFEED_OK;
    uint64_t *k = malloc((size_t)n * sizeof *k);
    if (k == NULL)
        return DETFEED_ENOMEM;
    bool nan;
    map_keys(keys, type, n, k, &nan);
    if (variant == DETFEED_NUMPY_SORT_SCALAR)
        np_aquicksort(k, idx, n);
    else
        xss_argsort(k, idx, n, nan, variant == DETFEED_NUMPY_SORT_AVX512 ? 8 : 4,
                    variant == DETFEED_NUMPY_SORT_AVX512);
    free(k);
    return DETFEED_OK;
}

int detfeed_numpy_sort_parse(const char *name, detfeed_numpy_sort *out)
{
    static const detfeed__named names[] = {
        {"scalar", DETFEED_NUMPY_SORT_SCALAR},
        {"avx2", DETFEED_NUMPY_SORT_AVX2},
        {"avx512", DETFEED_NUMPY_SORT_AVX512},
    };
    int v = 0;
    if (out == NULL || detfeed__lookup(names, sizeof names / sizeof names[0], name, &v))
        return DETFEED_EINVAL;
    *out = (detfeed_numpy_sort)v;
    return DETFEED_OK;
}

int detfeed_numpy_argsort(const void *keys, detfeed_numpy_dtype dtype, size_t n,
                          int64_t *order, detfeed_numpy_sort sort)
{
    if (n > INT32_MAX || (n > 0 && (keys == NULL || order == NULL)))
        return DETFEED_EINVAL;
    int *idx = malloc((n ? n : 1) * sizeof *idx);
    if (idx == NULL)
        return DETFEED_ENOMEM;
    int rc = detfeed__np_argsort(keys, dtype, (int)n, idx, sort);
    for (size_t i = 0; rc == DETFEED_OK && i < n; i++)
        order[i] = idx[i];
    free(idx);
    return rc;
}
