/* Progressive filling of weighted max-min fair rates: the inner loop of fabric_engine.flows.
 *
 * Why C: the filling runs one round per distinct saturation level, thousands of rounds
 * on a loaded 32,768-GPU fabric. In numpy every round costs a few passes over all live
 * links (~200,000), so the rounds, not the flops, dominate (fabric_engine/flows.py says
 * what was measured). Here a round costs only what changes: a heap keyed by each link's
 * saturation level gives the next level; the flows of the links that saturate and of the
 * flows that reach their demand are frozen by walking their columns and rows once. The
 * whole fill is O(nnz + re-keys * log E) instead of O(rounds * E): at 32,768 GPUs (2.1
 * million flows, 10 million entries, 5,069 rounds) about 63,000 re-keys.
 *
 * Semantics are those of the numpy fill it replaces (kept as flows._fill_numpy): all
 * growing flows rise together, flow i at speed w[i]; a round goes to the lowest level at
 * which a link saturates or a flow reaches its demand; links saturating within a relative
 * 1e-9 of that level saturate in the same round; flows on a saturated link freeze at
 * w * level (bottleneck: the highest-numbered saturated link they cross), flows at their
 * demand freeze at it (bottleneck -1).
 *
 * Link e's saturation level is (cap[e] - frozen[e]) / grow[e], frozen[e] the load of its
 * frozen flows and grow[e] the summed share * weight of its growing flows. Freezing a
 * flow at a level at most e's own level can only raise e's level, so a key once computed
 * stays a lower bound: freezing a flow only marks its links dirty, and a dirty link is
 * re-keyed when it comes to the top of the heap. A clean top is then the true minimum.
 * The heap holds one entry per live link and each freeze costs O(1) per entry.
 *
 * The incidence comes as two row blocks (a fixed block cached between calls, and a small
 * block of rows that change every call), each as CSR (rows -> columns, shares) plus the
 * column pattern (columns -> rows) of its transpose. Only Python's buffer protocol is
 * used, so building needs no numpy headers. The GIL is released while filling.
 *
 * Also here, for the same flows: A.T @ x for a few vectors in one pass (rmatvec), the
 * largest transfer time per group (group_max), the paced rates of solve_paced (paced)
 * and the bottlenecks of each group's slowest flows (slowest_pairs): numpy needs several
 * passes and temporaries of the flows' size for each, 10-50 ms apiece at that scale.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define REL_EPS 1e-9
#define PREFETCH_FAR 16
#define PREFETCH_NEAR 8

typedef struct {
    const int64_t *indptr; /* rows + 1 */
    const int32_t *indices; /* nnz: column of each entry */
    const double *data;     /* nnz: share, or NULL for all ones */
    const int64_t *t_indptr; /* columns + 1 */
    const int32_t *t_rows;   /* nnz: row (within the block) of each entry, by column */
    int64_t rows;
} block_t;

typedef struct {
    double *key;
    int32_t *link;
    int64_t size;
} heap_t;

static void heap_sift_down(heap_t *h, int64_t i) {
    int64_t n = h->size;
    double key = h->key[i];
    int32_t link = h->link[i];
    for (;;) {
        int64_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && h->key[c + 1] < h->key[c]) c++;
        if (key <= h->key[c]) break;
        h->key[i] = h->key[c];
        h->link[i] = h->link[c];
        i = c;
    }
    h->key[i] = key;
    h->link[i] = link;
}

static void heap_pop(heap_t *h) {
    if (--h->size == 0) return;
    h->key[0] = h->key[h->size];
    h->link[0] = h->link[h->size];
    heap_sift_down(h, 0);
}

/* Per-link and per-flow state, each in one struct: the fill's time goes to memory accesses scattered over
 * millions of flows and hundreds of thousands of links, and one cache line per element beats several. */
typedef struct {
    double frozen; /* load of the frozen flows */
    double grow;   /* share * weight of the growing flows */
    int32_t count; /* growing flows; -1 once saturated */
    int32_t dirty; /* a flow froze since the link was last keyed */
} link_t;

/* 24 bytes: at 16,384 GPUs (a million flows) the flows' state fits the 32 MB of cache a 2-core EPYC has; 32 bytes
 * did not. A block's rows are at most 2^32 entries from its start and 65,535 entries long (checked in py_fill; the
 * numpy fill takes the rare incidence beyond, see fabric_engine.flows). */
typedef struct {
    double w;
    double rate;     /* demand while growing, rate once frozen */
    uint32_t start;  /* its row: entries start .. start + len of its block */
    uint16_t len;
    int16_t state;   /* 0: growing, -1: never grew, 1: frozen */
} flow_t;

typedef struct {
    block_t b[2];
    int64_t flows, links;
    const double *cap;
    const int64_t *by_demand; /* flows with a finite demand, by demand / weight */
    const double *demand_level; /* their demand / weight, ascending */
    int64_t n_demand;
    const double *dem, *w; /* per flow */
    link_t *link;
    flow_t *flow;
    int64_t *bott; /* the caller's output */
    int64_t *sat_list;
    /* One bit per flow: ``done`` (not growing: frozen, or never grew) and ``now`` (frozen this round), with the
     * flows frozen this round listed to clear ``now`` after it. The column walks test these bits (a few hundred
     * kB, in cache) instead of the flow's state (tens of MB, a cache miss each): half the flows a saturating
     * link carries were frozen before. */
    uint64_t *done, *now;
    int64_t *this_round;
    int64_t n_this_round;
    heap_t heap;
} fill_t;

#define BIT(set, i) ((set)[(i) >> 6] & (1ull << ((i) & 63)))
#define SET(set, i) ((set)[(i) >> 6] |= (1ull << ((i) & 63)))
#define CLEAR(set, i) ((set)[(i) >> 6] &= ~(1ull << ((i) & 63)))

static inline double level_of_link(const fill_t *s, int64_t e) {
    double g = s->link[e].grow > 1e-300 ? s->link[e].grow : 1e-300;
    return (s->cap[e] - s->link[e].frozen) / g;
}

static int cmp_int64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Bring a clean entry to the top: re-key dirty links, drop links without growing flows. */
static void settle_top(fill_t *s, double level) {
    heap_t *h = &s->heap;
    while (h->size > 0) {
        link_t *l = &s->link[h->link[0]];
        if (l->count <= 0) {
            heap_pop(h);
        } else if (l->dirty) {
            double key = level_of_link(s, h->link[0]);
            h->key[0] = key > level ? key : level;
            l->dirty = 0;
            heap_sift_down(h, 0);
        } else {
            return;
        }
    }
}

/* Freeze flow i at ``level`` (bottleneck ``link``, -1: its demand) and take its growth off its links, which
 * become dirty. Done as soon as the flow is found, while its state is in cache. Returns 1 if it was growing. */
static inline int freeze(fill_t *s, int64_t i, int32_t round, int32_t link, double level) {
    if (BIT(s->done, i)) {
        if (BIT(s->now, i)) s->bott[i] = link; /* frozen this round by another link: the last one names it */
        return 0;
    }
    SET(s->done, i);
    SET(s->now, i);
    s->this_round[s->n_this_round++] = i;
    flow_t *f = &s->flow[i];
    f->state = 1;
    s->bott[i] = link;
    double r = f->w * level;
    if (r > f->rate) r = f->rate;
    f->rate = r;
    const block_t *b = i < s->b[0].rows ? &s->b[0] : &s->b[1];
    const int32_t *idx = b->indices + f->start;
    if (b->data) {
        const double *data = b->data + f->start;
        for (int32_t k = 0; k < (int32_t)f->len; k++) {
            link_t *l = &s->link[idx[k]];
            l->frozen += data[k] * r;
            l->grow -= data[k] * f->w;
            if (l->count > 0) l->count--;
            l->dirty = 1;
        }
    } else {
        for (int32_t k = 0; k < (int32_t)f->len; k++) {
            link_t *l = &s->link[idx[k]];
            l->frozen += r;
            l->grow -= f->w;
            if (l->count > 0) l->count--;
            l->dirty = 1;
        }
    }
    return 1;
}

/* Returns rounds (>= 0), or -2 when a greedy flow crosses only links of infinite capacity. */
static int64_t fill(fill_t *s) {
    int64_t E = s->links;
    int64_t remaining = 0;
    int32_t rounds = 0;
    for (int bk = 0; bk < 2; bk++) {
        const block_t *b = &s->b[bk];
        flow_t *flow = s->flow + (bk ? s->b[0].rows : 0);
        int64_t first = bk ? s->b[0].rows : 0;
        for (int64_t r = 0; r < b->rows; r++) {
            flow_t *f = &flow[r];
            double d = s->dem[first + r];
            f->w = s->w[first + r];
            f->rate = d;
            f->state = d > 0 ? 0 : -1;
            s->bott[first + r] = -1;
            f->start = (uint32_t)b->indptr[r];
            f->len = (uint16_t)(b->indptr[r + 1] - b->indptr[r]);
            if (f->len == 0) f->state = -1; /* crosses no link: at its demand */
            if (f->state < 0) {
                SET(s->done, first + r);
                continue;
            }
            remaining++;
            for (int64_t k = f->start; k < (int64_t)f->start + f->len; k++) {
                link_t *l = &s->link[b->indices[k]];
                l->grow += (b->data ? b->data[k] : 1.0) * f->w;
                l->count++;
            }
        }
    }
    heap_t *h = &s->heap;
    for (int64_t e = 0; e < E; e++) {
        if (s->link[e].count > 0) {
            h->key[h->size] = level_of_link(s, e);
            h->link[h->size++] = (int32_t)e;
        }
    }
    for (int64_t i = h->size / 2 - 1; i >= 0; i--) heap_sift_down(h, i);
    int64_t ptr = 0;
    double level = 0.0;
    while (remaining > 0) {
        rounds++;
        while (ptr < s->n_demand && BIT(s->done, s->by_demand[ptr])) ptr++;
        double next_dem = ptr < s->n_demand ? s->demand_level[ptr] : INFINITY;
        settle_top(s, level);
        double next_sat = h->size > 0 ? h->key[0] : INFINITY;
        double next = next_sat < next_dem ? next_sat : next_dem;
        if (!isfinite(next)) return -2;
        if (next > level) level = next;
        double thr = level + REL_EPS * level;
        /* the links that saturate at this level, then their growing flows */
        int64_t n_sat = 0;
        for (;;) {
            settle_top(s, level);
            if (h->size == 0 || h->key[0] > thr) break;
            s->sat_list[n_sat++] = h->link[0];
            s->link[h->link[0]].count = -1; /* saturated: never keyed again */
            heap_pop(h);
        }
        if (n_sat > 1) qsort(s->sat_list, (size_t)n_sat, sizeof(int64_t), cmp_int64);
        for (int64_t j = 0; j < n_sat; j++) {
            int64_t e = s->sat_list[j];
            for (int bk = 0; bk < 2; bk++) {
                const block_t *b = &s->b[bk];
                int64_t base = bk ? s->b[0].rows : 0;
                int64_t lo = b->t_indptr[e], hi = b->t_indptr[e + 1];
                /* The flows of a column lie far apart: fetch the state of the flows a few places ahead, and the
                 * rows of those nearer (their start is in cache by then), so that the misses overlap. */
                for (int64_t k = lo; k < hi; k++) {
                    if (k + PREFETCH_FAR < hi) {
                        int64_t r = base + b->t_rows[k + PREFETCH_FAR];
                        if (!BIT(s->done, r)) __builtin_prefetch(&s->flow[r], 0);
                    }
                    if (k + PREFETCH_NEAR < hi) {
                        int64_t r = base + b->t_rows[k + PREFETCH_NEAR];
                        if (!BIT(s->done, r)) __builtin_prefetch(b->indices + s->flow[r].start, 0);
                    }
                    remaining -= freeze(s, base + b->t_rows[k], rounds, (int32_t)e, level);
                }
            }
        }
        /* and the flows at their demand */
        while (ptr < s->n_demand && s->demand_level[ptr] <= thr)
            remaining -= freeze(s, s->by_demand[ptr++], rounds, -1, level);
        for (int64_t j = 0; j < s->n_this_round; j++) CLEAR(s->now, s->this_round[j]);
        s->n_this_round = 0;
    }
    return rounds;
}

/* ------------------------------------------------------------------ Python glue */
typedef struct {
    Py_buffer view;
    int held;
    int64_t n; /* items */
} arg_t;

/* A C-contiguous buffer of ``kind`` ('d' float64, 'q' int64, 'i' int32); None leaves ``a`` unheld when allowed. */
static int get_buffer(PyObject *obj, arg_t *a, char kind, int writable, int optional, const char *name) {
    a->held = 0;
    a->n = 0;
    if (obj == Py_None) {
        if (optional) return 0;
        PyErr_Format(PyExc_TypeError, "%s is needed", name);
        return -1;
    }
    if (PyObject_GetBuffer(obj, &a->view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0)))
        return -1;
    a->held = 1;
    const char *f = a->view.format ? a->view.format : "B";
    if (f[0] == '<' || f[0] == '=' || f[0] == '@') f++;
    Py_ssize_t size = kind == 'i' ? 4 : 8;
    int ok = a->view.itemsize == size && f[1] == '\0' &&
             (f[0] == kind || (kind == 'q' && f[0] == 'l') || (kind == 'i' && f[0] == 'i'));
    if (!ok) {
        PyErr_Format(PyExc_TypeError, "%s: expected a contiguous array of %s", name,
                     kind == 'd' ? "float64" : kind == 'q' ? "int64" : "int32");
        return -1;
    }
    a->n = a->view.len / size;
    return 0;
}

static void release(arg_t *a, int n) {
    for (int i = 0; i < n; i++)
        if (a[i].held) PyBuffer_Release(&a[i].view);
}

#define FILL_ARGS 18

static PyObject *py_fill(PyObject *self, PyObject *args) {
    static const char *names[FILL_ARGS] = {
        "a_indptr", "a_indices", "a_data", "a_t_indptr", "a_t_rows", "b_indptr", "b_indices", "b_data", "b_t_indptr",
        "b_t_rows", "cap", "dem", "w", "by_demand", "demand_level", "rate", "bott", "work"};
    static const char kinds[FILL_ARGS] = "qidqiqidqidddqddqd";
    PyObject *obj[FILL_ARGS];
    if (!PyArg_UnpackTuple(args, "fill", FILL_ARGS, FILL_ARGS, &obj[0], &obj[1], &obj[2], &obj[3], &obj[4], &obj[5],
                           &obj[6], &obj[7], &obj[8], &obj[9], &obj[10], &obj[11], &obj[12], &obj[13], &obj[14],
                           &obj[15], &obj[16], &obj[17]))
        return NULL;
    arg_t a[FILL_ARGS];
    memset(a, 0, sizeof(a));
    PyObject *result = NULL;
    fill_t s;
    memset(&s, 0, sizeof(s));
    char *own = NULL;
    for (int i = 0; i < FILL_ARGS; i++) {
        if (get_buffer(obj[i], &a[i], kinds[i], i >= 15, i == 2 || i == 7 || i == 17, names[i])) goto done;
    }
    int64_t links = a[10].n;
    for (int bk = 0; bk < 2; bk++) {
        arg_t *x = &a[5 * bk];
        block_t *b = &s.b[bk];
        b->indptr = x[0].view.buf;
        b->indices = x[1].view.buf;
        b->data = x[2].held ? x[2].view.buf : NULL;
        b->t_indptr = x[3].view.buf;
        b->t_rows = x[4].view.buf;
        b->rows = x[0].n - 1;
        int64_t nnz = x[1].n;
        /* O(rows + columns) checks here; the entries themselves (column and row numbers in range) are checked
         * once when the block is built (fabric_engine.incidence.Block.of), not on every fill. */
        int ok = b->rows >= 0 && x[3].n == links + 1 && x[4].n == nnz && (!b->data || x[2].n == nnz) &&
                 b->indptr[0] == 0 && b->indptr[b->rows] == nnz && b->t_indptr[0] == 0 && b->t_indptr[links] == nnz;
        ok = ok && nnz <= (int64_t)UINT32_MAX;
        for (int64_t r = 0; ok && r < b->rows; r++) ok = b->indptr[r] <= b->indptr[r + 1] &&
                                                        b->indptr[r + 1] - b->indptr[r] <= UINT16_MAX;
        for (int64_t e = 0; ok && e < links; e++) ok = b->t_indptr[e] <= b->t_indptr[e + 1];
        if (!ok) {
            PyErr_Format(PyExc_ValueError, "block %d: inconsistent CSR / transpose arrays", bk);
            goto done;
        }
    }
    s.flows = s.b[0].rows + s.b[1].rows;
    s.links = links;
    if (links >= INT32_MAX || a[11].n != s.flows || a[12].n != s.flows || a[15].n != s.flows ||
        a[16].n != s.flows || a[13].n != a[14].n) {
        PyErr_SetString(PyExc_ValueError, "cap, dem, w, rate and bott must match the incidence");
        goto done;
    }
    s.cap = a[10].view.buf;
    const double *dem = a[11].view.buf, *w = a[12].view.buf;
    s.by_demand = a[13].view.buf;
    s.demand_level = a[14].view.buf;
    s.n_demand = a[13].n;
    for (int64_t j = 0; j < s.n_demand; j++) {
        if (s.by_demand[j] < 0 || s.by_demand[j] >= s.flows) {
            PyErr_SetString(PyExc_ValueError, "by_demand names a flow outside the incidence");
            goto done;
        }
    }
    size_t E = (size_t)(links > 0 ? links : 1), F = (size_t)(s.flows > 0 ? s.flows : 1);
    /* Work space: the caller's (``work``, kept between fills so its pages are not faulted in and zeroed again
     * every tick), or our own. */
    size_t bitmap = 8 * ((F + 63) / 64);
    size_t need = F * sizeof(flow_t) + E * (sizeof(link_t) + sizeof(int64_t) + sizeof(double)) +
                  E * sizeof(int32_t) + 2 * bitmap + F * sizeof(int64_t) + 64;
    char *work = NULL;
    if (a[17].held && (size_t)a[17].view.len >= need) {
        work = a[17].view.buf;
    } else {
        own = malloc(need);
        work = own;
    }
    if (!work) {
        PyErr_NoMemory();
        goto done;
    }
    s.flow = (flow_t *)work;
    s.link = (link_t *)(work + F * sizeof(flow_t));
    s.sat_list = (int64_t *)((char *)s.link + E * sizeof(link_t));
    s.heap.key = (double *)((char *)s.sat_list + E * sizeof(int64_t));
    s.heap.link = (int32_t *)((char *)s.heap.key + E * sizeof(double));
    /* 8-byte aligned from here: the heap's links are 4 bytes each, so round up */
    s.done = (uint64_t *)(((uintptr_t)((char *)s.heap.link + E * sizeof(int32_t)) + 7) & ~(uintptr_t)7);
    s.now = s.done + bitmap / 8;
    s.this_round = (int64_t *)(s.now + bitmap / 8);
    memset(s.link, 0, E * sizeof(link_t));
    memset(s.done, 0, 2 * bitmap);
    double *rate = a[15].view.buf;
    s.bott = a[16].view.buf;
    s.dem = dem;
    s.w = w;
    int64_t rounds;
    Py_BEGIN_ALLOW_THREADS
    rounds = fill(&s);
    for (int64_t i = 0; i < s.flows; i++)
        rate[i] = s.flow[i].state < 0 ? (dem[i] > 0 ? dem[i] : 0.0) : s.flow[i].rate;
    Py_END_ALLOW_THREADS
    result = PyLong_FromLongLong((long long)rounds);
done:
    free(own);
    release(a, FILL_ARGS);
    return result;
}

static PyObject *py_work_size(PyObject *self, PyObject *args) {
    long long flows, links;
    if (!PyArg_ParseTuple(args, "LL", &flows, &links)) return NULL;
    size_t E = (size_t)(links > 0 ? links : 1), F = (size_t)(flows > 0 ? flows : 1);
    return PyLong_FromSize_t(F * sizeof(flow_t) + E * (sizeof(link_t) + sizeof(int64_t) + sizeof(double)) +
                             E * sizeof(int32_t) + 2 * (8 * ((F + 63) / 64)) + F * sizeof(int64_t) + 64);
}

/* out[j] += A.T @ x[j, offset:offset + rows] for a CSR A (indptr, indices, data or None for ones) and k vectors
 * x (k, n) -> out (k, cols): one pass over A for all of them, summed per column in an interleaved (cols, k) array so
 * that an entry touches one cache line. ``checked``: the column indices were checked when the block was built. */
static PyObject *py_rmatvec(PyObject *self, PyObject *args) {
    PyObject *obj[5];
    long long offset;
    int checked;
    if (!PyArg_ParseTuple(args, "OOOOLOp", &obj[0], &obj[1], &obj[2], &obj[3], &offset, &obj[4], &checked))
        return NULL;
    static const char *names[5] = {"indptr", "indices", "data", "x", "out"};
    static const char kinds[5] = "qiddd";
    arg_t a[5];
    memset(a, 0, sizeof(a));
    PyObject *result = NULL;
    double *acc = NULL;
    for (int i = 0; i < 5; i++)
        if (get_buffer(obj[i], &a[i], kinds[i], i == 4, i == 2, names[i])) goto done;
    const int64_t *indptr = a[0].view.buf;
    const int32_t *indices = a[1].view.buf;
    const double *data = a[2].held ? a[2].view.buf : NULL, *x = a[3].view.buf;
    double *out = a[4].view.buf;
    int64_t rows = a[0].n - 1, nnz = a[1].n;
    int64_t k = a[3].view.ndim == 2 ? a[3].view.shape[0] : 1, n = k > 0 ? a[3].n / k : 0;
    int64_t cols = k > 0 ? a[4].n / k : 0;
    int ok = rows >= 0 && k >= 1 && k <= 8 && a[3].n == k * n && offset >= 0 && offset + rows <= n &&
             a[4].n == k * cols && (!data || a[2].n == nnz) && indptr[0] == 0 && indptr[rows] == nnz;
    for (int64_t r = 0; ok && r < rows; r++) ok = indptr[r] <= indptr[r + 1];
    for (int64_t i = 0; ok && !checked && i < nnz; i++) ok = indices[i] >= 0 && indices[i] < cols;
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "rmatvec: inconsistent arrays (at most 8 vectors)");
        goto done;
    }
    acc = calloc((size_t)(cols > 0 ? cols : 1) * (size_t)k, sizeof(double));
    if (!acc) {
        PyErr_NoMemory();
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    x += offset;
    for (int64_t r = 0; r < rows; r++) {
        double v[8];
        int any = 0;
        for (int64_t j = 0; j < k; j++) any |= (v[j] = x[j * n + r]) != 0.0;
        if (!any) continue;
        if (k == 2 && !data) {
            for (int64_t i = indptr[r]; i < indptr[r + 1]; i++) {
                double *o = acc + 2 * (int64_t)indices[i];
                o[0] += v[0];
                o[1] += v[1];
            }
            continue;
        }
        for (int64_t i = indptr[r]; i < indptr[r + 1]; i++) {
            double d = data ? data[i] : 1.0;
            double *o = acc + k * (int64_t)indices[i];
            for (int64_t j = 0; j < k; j++) o[j] += d * v[j];
        }
    }
    for (int64_t e = 0; e < cols; e++)
        for (int64_t j = 0; j < k; j++) out[j * cols + e] += acc[k * e + j];
    Py_END_ALLOW_THREADS
    Py_INCREF(Py_None);
    result = Py_None;
done:
    free(acc);
    release(a, 5);
    return result;
}

/* out[j] += (A.T @ x[offset:offset + rows])[cols[j]] from the transpose's pattern (t_indptr, t_rows, t_data or
 * None for ones): a few columns without a pass over all of A. With ``group`` (int64, as long as x), rows whose
 * group[offset + row] < 0 are left out. ``checked``: t_rows are known to be below ``rows``. */
static PyObject *py_rmatvec_columns(PyObject *self, PyObject *args) {
    PyObject *obj[7];
    long long offset, rows;
    int checked;
    if (!PyArg_ParseTuple(args, "OOOOLLOOOp", &obj[0], &obj[1], &obj[2], &obj[3], &offset, &rows, &obj[4], &obj[5],
                          &obj[6], &checked))
        return NULL;
    static const char *names[7] = {"t_indptr", "t_rows", "t_data", "x", "group", "cols", "out"};
    static const char kinds[7] = "qiddqqd";
    arg_t a[7];
    memset(a, 0, sizeof(a));
    PyObject *result = NULL;
    for (int i = 0; i < 7; i++)
        if (get_buffer(obj[i], &a[i], kinds[i], i == 6, i == 2 || i == 4, names[i])) goto done;
    const int64_t *t_indptr = a[0].view.buf, *cols = a[5].view.buf, *group = a[4].held ? a[4].view.buf : NULL;
    const int32_t *t_rows = a[1].view.buf;
    const double *t_data = a[2].held ? a[2].view.buf : NULL, *x = a[3].view.buf;
    double *out = a[6].view.buf;
    int64_t n_cols = a[0].n - 1, nnz = a[1].n, k = a[5].n;
    int ok = n_cols >= 0 && a[6].n == k && (!t_data || a[2].n == nnz) && t_indptr[0] == 0 && t_indptr[n_cols] == nnz &&
             offset >= 0 && rows >= 0 && offset + rows <= a[3].n && (!group || a[4].n == a[3].n);
    for (int64_t e = 0; ok && e < n_cols; e++) ok = t_indptr[e] <= t_indptr[e + 1];
    for (int64_t j = 0; ok && j < k; j++) ok = cols[j] >= 0 && cols[j] < n_cols;
    for (int64_t j = 0; ok && !checked && j < k; j++)
        for (int64_t i = t_indptr[cols[j]]; ok && i < t_indptr[cols[j] + 1]; i++) ok = t_rows[i] >= 0 && t_rows[i] < rows;
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "rmatvec_columns: inconsistent arrays");
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    x += offset;
    if (group) group += offset;
    for (int64_t j = 0; j < k; j++) {
        double sum = 0.0;
        for (int64_t i = t_indptr[cols[j]]; i < t_indptr[cols[j] + 1]; i++) {
            int32_t r = t_rows[i];
            if (group && group[r] < 0) continue;
            sum += t_data ? t_data[i] * x[r] : x[r];
        }
        out[j] += sum;
    }
    Py_END_ALLOW_THREADS
    Py_INCREF(Py_None);
    result = Py_None;
done:
    release(a, 7);
    return result;
}

/* Seconds each flow needs for its gigabits at its rate: 0 without bits, inf at rate 0 (or NaN). */
static inline double transfer_time(double bits, double rate) {
    if (!(bits > 0)) return 0.0;
    double t = bits / rate;
    return t == t ? t : INFINITY;
}

/* out[g] = max(out[g], t[i]) over flows i of group g >= 0: with ``rate`` None, t = values; else t is the
 * transfer time of ``values`` gigabits at ``rate`` (NaN wins, as with numpy's maximum). */
static PyObject *py_group_max(PyObject *self, PyObject *args) {
    PyObject *obj[4];
    if (!PyArg_UnpackTuple(args, "group_max", 4, 4, &obj[0], &obj[1], &obj[2], &obj[3])) return NULL;
    static const char *names[4] = {"values", "rate", "group", "out"};
    static const char kinds[4] = "ddqd";
    arg_t a[4];
    memset(a, 0, sizeof(a));
    PyObject *result = NULL;
    for (int i = 0; i < 4; i++)
        if (get_buffer(obj[i], &a[i], kinds[i], i == 3, i == 1, names[i])) goto done;
    const double *v = a[0].view.buf, *rate = a[1].held ? a[1].view.buf : NULL;
    const int64_t *g = a[2].view.buf;
    double *out = a[3].view.buf;
    int64_t n = a[0].n, groups = a[3].n;
    if (a[2].n != n || (rate && a[1].n != n)) {
        PyErr_SetString(PyExc_ValueError, "group_max: values, rate and group differ in length");
        goto done;
    }
    for (int64_t i = 0; i < n; i++) {
        if (g[i] >= groups) {
            PyErr_SetString(PyExc_ValueError, "group_max: a group outside the output");
            goto done;
        }
    }
    Py_BEGIN_ALLOW_THREADS
    for (int64_t i = 0; i < n; i++) {
        int64_t k = g[i];
        if (k < 0) continue;
        double t = rate ? transfer_time(v[i], rate[i]) : v[i];
        if (t > out[k] || t != t) out[k] = t;
    }
    Py_END_ALLOW_THREADS
    Py_INCREF(Py_None);
    result = Py_None;
done:
    release(a, 4);
    return result;
}

/* out[i] = min(bits[i] / t_group[group[i]], rate[i]) for grouped flows (0 without bits), rate[i] for the others. */
static PyObject *py_paced(PyObject *self, PyObject *args) {
    PyObject *obj[5];
    if (!PyArg_UnpackTuple(args, "paced", 5, 5, &obj[0], &obj[1], &obj[2], &obj[3], &obj[4])) return NULL;
    static const char *names[5] = {"rate", "bits", "group", "t_group", "out"};
    static const char kinds[5] = "ddqdd";
    arg_t a[5];
    memset(a, 0, sizeof(a));
    PyObject *result = NULL;
    for (int i = 0; i < 5; i++)
        if (get_buffer(obj[i], &a[i], kinds[i], i == 4, 0, names[i])) goto done;
    const double *rate = a[0].view.buf, *bits = a[1].view.buf, *tg = a[3].view.buf;
    const int64_t *g = a[2].view.buf;
    double *out = a[4].view.buf;
    int64_t n = a[0].n, groups = a[3].n;
    if (a[1].n != n || a[2].n != n || a[4].n != n) {
        PyErr_SetString(PyExc_ValueError, "paced: arrays differ in length");
        goto done;
    }
    for (int64_t i = 0; i < n; i++) {
        if (g[i] >= groups) {
            PyErr_SetString(PyExc_ValueError, "paced: a group outside t_group");
            goto done;
        }
    }
    Py_BEGIN_ALLOW_THREADS
    for (int64_t i = 0; i < n; i++) {
        if (g[i] < 0) {
            out[i] = rate[i];
            continue;
        }
        double pace = bits[i] > 0 ? bits[i] / tg[g[i]] : 0.0;
        out[i] = pace < rate[i] ? pace : rate[i];
    }
    Py_END_ALLOW_THREADS
    Py_INCREF(Py_None);
    result = Py_None;
done:
    release(a, 5);
    return result;
}

/* The distinct keys g * columns + bott[i] of the flows i of group g >= 0 whose transfer time at ``rate`` is at
 * least t_min[g] and that have a bottleneck (the links that hold each group's slowest flows), in ``out``, in the
 * order first met; returns how many. ``seen``: a zeroed bit set of groups * columns bits. */
static PyObject *py_slowest_pairs(PyObject *self, PyObject *args) {
    PyObject *obj[7];
    long long columns;
    if (!PyArg_ParseTuple(args, "OOOOOLOO", &obj[0], &obj[1], &obj[2], &obj[3], &obj[4], &columns, &obj[5], &obj[6]))
        return NULL;
    static const char *names[7] = {"bits", "rate", "group", "t_min", "bott", "seen", "out"};
    static const char kinds[7] = "ddqdq q";
    arg_t a[7];
    memset(a, 0, sizeof(a));
    PyObject *result = NULL;
    for (int i = 0; i < 7; i++) {
        if (i == 5) continue;
        if (get_buffer(obj[i], &a[i], kinds[i], i == 6, 0, names[i])) goto done;
    }
    if (PyObject_GetBuffer(obj[5], &a[5].view, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE)) goto done;
    a[5].held = 1;
    const double *bits = a[0].view.buf, *rate = a[1].view.buf, *tmin = a[3].view.buf;
    const int64_t *g = a[2].view.buf, *bott = a[4].view.buf;
    unsigned char *seen = a[5].view.buf;
    int64_t *out = a[6].view.buf;
    int64_t n = a[0].n, groups = a[3].n, cap = a[6].n, count = 0;
    if (a[1].n != n || a[2].n != n || a[4].n != n || columns < 0 || a[5].view.len * 8 < groups * columns ||
        cap < (n < groups * columns ? n : groups * columns)) {
        PyErr_SetString(PyExc_ValueError, "slowest_pairs: arrays differ in length");
        goto done;
    }
    for (int64_t i = 0; i < n; i++) {
        if (g[i] >= groups || bott[i] >= columns) {
            PyErr_SetString(PyExc_ValueError, "slowest_pairs: a group or bottleneck outside the bit set");
            goto done;
        }
    }
    Py_BEGIN_ALLOW_THREADS
    for (int64_t i = 0; i < n; i++) {
        if (g[i] < 0 || bott[i] < 0) continue;
        if (transfer_time(bits[i], rate[i]) >= tmin[g[i]]) {
            int64_t key = g[i] * columns + bott[i];
            unsigned char bit = (unsigned char)(1u << (key & 7));
            if (!(seen[key >> 3] & bit)) {
                seen[key >> 3] |= bit;
                out[count++] = key;
            }
        }
    }
    Py_END_ALLOW_THREADS
    result = PyLong_FromLongLong((long long)count);
done:
    release(a, 7);
    return result;
}

static PyMethodDef methods[] = {
    {"fill", py_fill, METH_VARARGS,
     "fill(a_indptr, a_indices, a_data, a_t_indptr, a_t_rows, b_indptr, b_indices, b_data, b_t_indptr, b_t_rows, "
     "cap, dem, w, by_demand, demand_level, rate, bott, work) -> rounds (-2: a greedy flow crosses only infinite "
     "capacity). ``work``: None or a float64 scratch array reused between calls (at least work_size() bytes)."},
    {"work_size", py_work_size, METH_VARARGS, "work_size(flows, links) -> bytes of scratch a fill needs"},
    {"rmatvec", py_rmatvec, METH_VARARGS,
     "rmatvec(indptr, indices, data, x, offset, out, checked): out[j] += A.T @ x[j, offset:offset + rows] for x "
     "(k, n), out (k, cols), k <= 8; checked: the column indices are known to be in range"},
    {"rmatvec_columns", py_rmatvec_columns, METH_VARARGS,
     "rmatvec_columns(t_indptr, t_rows, t_data, x, offset, rows, group, cols, out, checked): out[j] += "
     "(A.T @ x[offset:offset + rows])[cols[j]], rows of group < 0 left out (group None: none)"},
    {"group_max", py_group_max, METH_VARARGS,
     "group_max(values, rate, group, out): out[g] = max(out[g], t[group == g]), t = values, or with a rate the "
     "transfer time of values gigabits at it"},
    {"slowest_pairs", py_slowest_pairs, METH_VARARGS,
     "slowest_pairs(bits, rate, group, t_min, bott, columns, seen, out) -> count: the distinct keys g * columns + "
     "bott of the flows of group g whose transfer time is at least t_min[g], in out[:count] (seen: a zeroed bit set)"},
    {"paced", py_paced, METH_VARARGS,
     "paced(rate, bits, group, t_group, out): grouped flows at min(bits / t_group[group], rate), others at rate"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_maxmin",
                                    "Compiled progressive filling (see fabric_engine.flows).", -1, methods};

PyMODINIT_FUNC PyInit__maxmin(void) { return PyModule_Create(&module); }
