/* The fixed point of fabric_engine.backpressure.solve in C (fabric_engine._credit): the same iteration, the same order of sums.
 *
 * Why C: one numpy iteration is some twenty passes over the hops and pairs with temporaries of their
 * size, and the arbiters' water levels take a few bincount rounds each; at 4,096 GPUs (1.15 million
 * hops) that is ~40 ms an iteration. Here an iteration is two passes over the hops, one over the pairs
 * per lane and one per input, with no temporaries.
 *
 * Semantics are those of solve._iterate_numpy, step for step: sums are taken in the order numpy's
 * bincount takes them (ascending index), the water levels run the rounds of waterfill.water_levels per
 * group (a group's rounds stop when its set of members below the level no longer changes; at most 64),
 * and the damping, the stop test and the tolerance are the same. Only Python's buffer protocol is
 * used (no numpy headers). The GIL is released while iterating.
 *
 * A solve that does not stop returns the mean of its iterates from ``avg_from`` on (a limit cycle's centre, not
 * its last point): from that iteration the departures pass adds each hop's departure to a sum, and the caps are
 * summed per lane; the means are divided out once at the end, the arrivals recomputed from them.
 *
 * Its working memory is the caller's ``work`` when it is large enough (solve.Scratch: kept between a live tick's
 * solves, so no page is faulted in again), else allocated here. The arrivals a solve leaves stay in ``work``: a solve
 * carried on from it (start_mode 3) updates those of the rows whose demand changed (carried_arrivals).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define TIGHT (1.0 - 1e-12)
#define MAX_ROUNDS 64

typedef struct {
    Py_buffer view;
    int held;
    int64_t n;
} arg_t;

static int get_buffer(PyObject *obj, arg_t *a, char kind, int writable, const char *name) {
    a->held = 0;
    a->n = 0;
    if (PyObject_GetBuffer(obj, &a->view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0)))
        return -1;
    a->held = 1;
    const char *f = a->view.format ? a->view.format : "B";
    if (f[0] == '<' || f[0] == '=' || f[0] == '@') f++;
    int ok = a->view.itemsize == 8 && f[1] == '\0' && (f[0] == kind || (kind == 'q' && f[0] == 'l'));
    if (!ok) {
        PyErr_Format(PyExc_TypeError, "%s: expected a contiguous array of %s", name, kind == 'd' ? "float64" : "int64");
        return -1;
    }
    a->n = a->view.len / 8;
    return 0;
}

/* Water level of one group (members m[0..n), demands dem[m], weights w[m] or 1): waterfill.water_levels.
 * extra_w > 0: with one more member of that weight that asks for everything (summed after the others, as
 * water_levels sums a member numbered after them). */
static double level_of(const int64_t *m, int64_t n, const double *dem, const double *w, double cap,
                       unsigned char *below, double extra_w) {
    double total_w = 0.0;
    for (int64_t j = 0; j < n; j++) total_w += w ? w[m[j]] : 1.0;
    if (extra_w > 0.0) total_w += extra_w;
    double level = total_w > 0 ? cap / total_w : INFINITY;
    for (int64_t j = 0; j < n; j++) below[j] = 0;
    for (int r = 0; r < MAX_ROUNDS; r++) {
        int changed = 0;
        for (int64_t j = 0; j < n; j++) {
            double wj = w ? w[m[j]] : 1.0;
            unsigned char now = dem[m[j]] < wj * level * TIGHT;
            if (now != below[j]) changed = 1;
            below[j] = now;
        }
        if (!changed) break;
        double kept = 0.0, left_w = 0.0;
        for (int64_t j = 0; j < n; j++) {
            double wj = w ? w[m[j]] : 1.0;
            if (below[j]) kept += dem[m[j]];
            else left_w += wj;
        }
        if (extra_w > 0.0) left_w += extra_w;
        double room = cap - kept;
        level = left_w > 0 ? (room > 0.0 ? room : 0.0) / left_w : INFINITY;
    }
    return level;
}

/* The arrivals d at every pair: each row's demand at its first hop, the previous hop's departure at the others
 * (rows' hops contiguous, in path order). start_mode 1: each departure first cut to its row's demand, 2: set to it;
 * then each row's rate read from its last hop. */
static void arrivals(int64_t R, int64_t P, const int64_t *last, const int64_t *hop_pair, const double *row_dem,
                     double *depart, double *d, int start_mode, double *rate) {
    if (P) memset(d, 0, (size_t)P * sizeof(double));
    for (int64_t r = 0, h = 0; r < R; r++) {
        for (int64_t g = h; start_mode && g <= last[r]; g++)
            if (start_mode == 2 || depart[g] > row_dem[r]) depart[g] = row_dem[r];
        if (start_mode) rate[r] = depart[last[r]];
        d[hop_pair[h]] += row_dem[r];
        for (h++; h <= last[r]; h++) d[hop_pair[h]] += depart[h - 1];
    }
}

/* The arrivals of a solve carried on from the last one on the same departures (start_mode 3): ``d`` holds the
 * arrivals the last solve left, for its rows' demands ``old_dem``. Only the rows whose demand changed move: their
 * contributions for the old demand are taken out of their pairs' sums (a row that did not run departed nothing), their
 * departures cut to the new demand (a row that starts running: its departures set above it by the caller, it is cut
 * too), their new ones added; each row's rate read from its last hop. The sums differ from a fresh pass by rounding
 * only. */
static void carried_arrivals(int64_t R, const int64_t *last, const int64_t *hop_pair, const double *row_dem,
                             const double *old_dem, double *depart, double *d, double *rate) {
    for (int64_t r = 0, h0 = 0; r < R; h0 = last[r] + 1, r++) {
        const double was = old_dem[r], now = row_dem[r];
        if (was != now || depart[h0] > now) {  /* (a row the caller starts from its demand: departures set above it) */
            if (was > 0.0) {
                d[hop_pair[h0]] -= was;
                for (int64_t h = h0 + 1; h <= last[r]; h++) d[hop_pair[h]] -= depart[h - 1];
                for (int64_t h = h0; h <= last[r]; h++)
                    if (d[hop_pair[h]] < 0.0) d[hop_pair[h]] = 0.0;
            }
            for (int64_t g = h0; g <= last[r]; g++)
                if (depart[g] > now) depart[g] = now;
            d[hop_pair[h0]] += now;
            for (int64_t h = h0 + 1; h <= last[r]; h++) d[hop_pair[h]] += depart[h - 1];
        }
        rate[r] = depart[last[r]];
    }
}

/* Doubles of working memory a solve uses: the arrivals in two slots, the rows' demands of the last solve, the
 * iteration's arrays per lane, input and row, an arbiter's ``below`` flags, and with averaging the sums per hop and
 * lane (sizes of 0 count as 1). The layout py_solve cuts its work into. */
static size_t work_need(size_t P, size_t R, size_t L, size_t I, size_t H, size_t widest, int averaging) {
    size_t p1 = P ? P : 1, r1 = R ? R : 1, l1 = L ? L : 1, i1 = I ? I : 1, h1 = H ? H : 1;
    return 2 * p1 + 2 * r1 + 5 * l1 + 2 * i1 + (widest + 7) / 8 + (averaging ? h1 + l1 : 0);
}

enum {
    A_HOP_PAIR, A_HOP_PREV, A_HOP_INPUT, A_HOP_ROW, A_HOP_OUT, A_ROW_DEM, A_LAST, A_PAIR_INPUT, A_PAIR_LANE, A_LANE_PAIRS, A_LANE_PTR,
    A_INPUT_PTR, A_INPUT_LANE, A_LANE_CAP, A_LANE_W, A_LANE_LINK, A_LINK_CAP, A_LINK_LANES, A_LINK_PTR,
    A_DEPART, A_HELD_CAP, A_RATE, A_LANE_DEM, A_LINK_RATE, A_WORK, N_ARGS
};

static PyObject *py_solve(PyObject *self, PyObject *args) {
    PyObject *obj[N_ARGS];
    long long n_vls, max_iter, min_iter, avg_from, slot;
    double tol_abs, damping;
    int start_mode, checked;
    if (!PyArg_ParseTuple(args, "OOOOOOOOOOOOOOOOOOOOOOOOOLLLddipLL", &obj[0], &obj[1], &obj[2], &obj[3], &obj[4],
                          &obj[5], &obj[6], &obj[7], &obj[8], &obj[9], &obj[10], &obj[11], &obj[12], &obj[13],
                          &obj[14], &obj[15], &obj[16], &obj[17], &obj[18], &obj[19], &obj[20], &obj[21], &obj[22],
                          &obj[23], &obj[24], &n_vls, &max_iter, &min_iter, &tol_abs, &damping, &start_mode, &checked,
                          &avg_from, &slot))
        return NULL;
    static const char *names[N_ARGS] = {"hop_pair", "hop_prev", "hop_input", "hop_row", "hop_out", "row_dem", "last",
                                        "pair_input",
                                        "pair_lane", "lane_pairs", "lane_ptr", "input_ptr", "input_lane",
                                        "lane_cap", "lane_w", "lane_link", "link_cap", "link_lanes", "link_ptr",
                                        "depart", "held_cap", "rate", "lane_dem", "link_rate", "work"};
    static const char kinds[N_ARGS] = "qqqqqdqqqqqqqddqdqqdddddd";
    arg_t a[N_ARGS];
    memset(a, 0, sizeof(a));
    PyObject *result = NULL;
    double *d, *d_next, *k, *level, *factor_in, *drain_in, *new_cap, *asked, *more, *new_rate, *sum_depart = NULL,
           *sum_cap = NULL, *owned = NULL;
    unsigned char *below;
    for (int i = 0; i < N_ARGS; i++)
        if (get_buffer(obj[i], &a[i], kinds[i], i >= A_DEPART, names[i])) goto done;
    const int64_t H = a[A_HOP_PAIR].n, R = a[A_LAST].n, P = a[A_PAIR_INPUT].n, L = a[A_LANE_CAP].n,
                  I = a[A_INPUT_LANE].n, E = a[A_LINK_CAP].n;
    const int64_t *hop_pair = a[A_HOP_PAIR].view.buf, *hop_prev = a[A_HOP_PREV].view.buf,
                  *hop_row = a[A_HOP_ROW].view.buf, *hop_out = a[A_HOP_OUT].view.buf,
                  *hop_input = a[A_HOP_INPUT].view.buf, *last = a[A_LAST].view.buf,
                  *pair_input = a[A_PAIR_INPUT].view.buf, *pair_lane = a[A_PAIR_LANE].view.buf,
                  *lane_pairs = a[A_LANE_PAIRS].view.buf, *lane_ptr = a[A_LANE_PTR].view.buf,
                  *input_ptr = a[A_INPUT_PTR].view.buf, *input_lane = a[A_INPUT_LANE].view.buf,
                  *lane_link = a[A_LANE_LINK].view.buf, *link_lanes = a[A_LINK_LANES].view.buf,
                  *link_ptr = a[A_LINK_PTR].view.buf;
    const double *row_dem = a[A_ROW_DEM].view.buf, *lane_cap = a[A_LANE_CAP].view.buf,
                 *lane_w = a[A_LANE_W].view.buf, *link_cap = a[A_LINK_CAP].view.buf;
    double *depart = a[A_DEPART].view.buf, *held_cap = a[A_HELD_CAP].view.buf, *rate = a[A_RATE].view.buf,
           *lane_dem = a[A_LANE_DEM].view.buf, *link_rate = a[A_LINK_RATE].view.buf;
    int ok = a[A_HOP_PREV].n == H && a[A_HOP_INPUT].n == H && a[A_HOP_ROW].n == H && a[A_HOP_OUT].n == H &&
             a[A_ROW_DEM].n == R && a[A_LINK_RATE].n == E && a[A_PAIR_LANE].n == P &&
             a[A_LANE_PAIRS].n == P && a[A_LANE_PTR].n == L + 1 && a[A_INPUT_PTR].n == I + 1 &&
             a[A_LANE_W].n == L && a[A_LANE_LINK].n == L && a[A_LINK_LANES].n == L && a[A_LINK_PTR].n == E + 1 &&
             a[A_DEPART].n == H && a[A_HELD_CAP].n == L && a[A_RATE].n == R && a[A_LANE_DEM].n == L &&
             lane_ptr[0] == 0 && lane_ptr[L] == P && input_ptr[0] == 0 && input_ptr[I] == P && link_ptr[0] == 0 &&
             link_ptr[E] == L && n_vls >= 1;
    /* the index tables' contents: once per hop table (``checked``: the caller has them checked) */
    for (int64_t h = 0; ok && !checked && h < H; h++)
        ok = hop_pair[h] >= 0 && hop_pair[h] < P && hop_prev[h] < h && hop_input[h] >= 0 && hop_input[h] < I &&
             hop_row[h] >= 0 && hop_row[h] < R && hop_out[h] >= 0 && hop_out[h] < E;
    for (int64_t r = 0; ok && !checked && r < R; r++) ok = last[r] >= (r ? last[r - 1] + 1 : 0) && last[r] < H;
    ok = ok && (R ? last[R - 1] == H - 1 : H == 0);
    for (int64_t r = 0, h = 0; ok && !checked && r < R; r++)
        for (int64_t h0 = h; ok && h <= last[r]; h++) ok = hop_row[h] == r && hop_prev[h] == (h == h0 ? -1 : h - 1);
    for (int64_t p = 0; ok && !checked && p < P; p++)
        ok = pair_input[p] >= 0 && pair_input[p] < I && pair_lane[p] >= 0 && pair_lane[p] < L && lane_pairs[p] >= 0 &&
             lane_pairs[p] < P;
    for (int64_t i = 0; ok && !checked && i < I; i++) ok = input_lane[i] < L && input_ptr[i] <= input_ptr[i + 1];
    for (int64_t l = 0; ok && !checked && l < L; l++)
        ok = lane_link[l] >= 0 && lane_link[l] < E && link_lanes[l] >= 0 && link_lanes[l] < L &&
             lane_ptr[l] <= lane_ptr[l + 1];
    for (int64_t e = 0; ok && !checked && e < E; e++) ok = link_ptr[e] <= link_ptr[e + 1];
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "credit solve: inconsistent hop tables");
        goto done;
    }
    int64_t widest = 1;
    for (int64_t l = 0; l < L; l++)
        if (lane_ptr[l + 1] - lane_ptr[l] > widest) widest = lane_ptr[l + 1] - lane_ptr[l];
    for (int64_t e = 0; e < E; e++)
        if (link_ptr[e + 1] - link_ptr[e] > widest) widest = link_ptr[e + 1] - link_ptr[e];
    size_t p1 = P ? P : 1, l1 = L ? L : 1, i1 = I ? I : 1, r1 = R ? R : 1, h1 = H ? H : 1;
    const int averaging = avg_from >= 1 && avg_from <= max_iter;
    /* working memory: the caller's ``work`` when it is large enough (kept between solves: no page is faulted in
     * again), else allocated here */
    size_t need = work_need((size_t)P, (size_t)R, (size_t)L, (size_t)I, (size_t)H, (size_t)widest, averaging);
    double *base = a[A_WORK].view.buf;
    if ((size_t)a[A_WORK].n < need) {
        if (start_mode == 3) {  /* the carried arrivals live in the caller's work */
            PyErr_SetString(PyExc_ValueError, "credit solve: a carried start needs the work it was left in");
            goto done;
        }
        base = owned = malloc(need * sizeof(double));
    }
    if (!base) {
        PyErr_NoMemory();
        goto done;
    }
    /* work: the arrivals in two slots (``slot``: the one the last solve left them in), the rows' demands of the last
     * solve, then the iteration's own arrays */
    d = base + (slot ? p1 : 0);
    d_next = base + (slot ? 0 : p1);
    double *old_dem = base + 2 * p1;
    k = old_dem + r1;
    level = k + l1;
    new_cap = level + l1;
    asked = new_cap + l1;
    more = asked + l1;
    factor_in = more + l1;
    drain_in = factor_in + i1;
    new_rate = drain_in + i1;
    below = (unsigned char *)(new_rate + r1);
    if (averaging) {
        sum_depart = new_rate + r1 + ((size_t)widest + 7) / 8;
        sum_cap = sum_depart + h1;
        memset(sum_depart, 0, (h1 + l1) * sizeof(double));
    }
    long long iterations = 0, averaged = 0;
    int converged = 0;
    Py_BEGIN_ALLOW_THREADS
    double damp = 0.0, last_moved = INFINITY;
    /* start_mode 0: depart as given; 1: a start's departures, no faster than the row's (new) demand;
     * 2: cold, every hop at its row's demand; 3: 1 carried on from the last solve's arrivals (carried_arrivals).
     * Rates and held caps are then the start's. */
    /* arrivals: the previous hop's departures (of the last iteration), the row's demand at its first hop; the
     * departures pass makes the next iteration's (a row crosses a pair once: each pair's sum runs over rows in order,
     * as a pass over the hops in order would). The start is set in the same pass. */
    if (start_mode == 3)
        carried_arrivals(R, last, hop_pair, row_dem, old_dem, depart, d, rate);
    else
        arrivals(R, P, last, hop_pair, row_dem, depart, d, start_mode, rate);  /* rows' hops checked above */
    int link_rate_done = 0;  /* summed in the last iteration's departures pass */
    if (E) memset(link_rate, 0, (size_t)E * sizeof(double));
    for (iterations = 1; iterations <= max_iter; iterations++) {
        if (L) memset(lane_dem, 0, (size_t)L * sizeof(double));
        for (int64_t p = 0; p < P; p++) lane_dem[pair_lane[p]] += d[p];
        /* VL arbitration: what each lane could carry if it asked for more */
        if (n_vls == 1) {
            for (int64_t l = 0; l < L; l++) k[l] = held_cap[l] < lane_cap[l] ? held_cap[l] : lane_cap[l];
        } else {
            for (int64_t l = 0; l < L; l++) asked[l] = lane_dem[l] < held_cap[l] ? lane_dem[l] : held_cap[l];
            for (int64_t e = 0; e < E; e++) {
                int64_t lo = link_ptr[e], n = link_ptr[e + 1] - lo;
                if (!n) continue;
                double lev = level_of(link_lanes + lo, n, asked, lane_w, link_cap[e], below, 0.0);
                double sum = 0.0;
                for (int64_t j = 0; j < n; j++) sum += asked[link_lanes[lo + j]];
                double slack = link_cap[e] - sum;
                if (slack < 0.0) slack = 0.0;
                for (int64_t j = 0; j < n; j++) {
                    int64_t l = link_lanes[lo + j];
                    double v = lane_w[l] * lev;
                    if (!isfinite(lev)) {  /* the link has room: its slack, or the lane's share if it asked for all */
                        double share = lane_w[l] * level_of(link_lanes + lo, n, asked, lane_w, link_cap[e], below,
                                                            lane_w[l]);
                        v = asked[l] + slack;
                        if (share > v) v = share;
                    }
                    k[l] = held_cap[l] < v ? held_cap[l] : v;
                }
            }
        }
        /* round robin among the input buffers of each lane */
        for (int64_t l = 0; l < L; l++) {
            level[l] = level_of(lane_pairs + lane_ptr[l], lane_ptr[l + 1] - lane_ptr[l], d, NULL, k[l], below, 0.0);
            /* an input's share if it asked for all (round robin takes it from the others): where the lane has room */
            more[l] = isfinite(level[l]) ? level[l]
                                         : level_of(lane_pairs + lane_ptr[l], lane_ptr[l + 1] - lane_ptr[l], d, NULL,
                                                    k[l], below, 1.0);
        }
        /* head of line: a buffer moves at the pace of its most held output; it accepts what it drains */
        for (int64_t i = 0; i < I; i++) {
            double f_min = INFINITY, t_min = INFINITY, total_in = 0.0;  /* pairs sorted by input: bincount's order */
            for (int64_t p = input_ptr[i]; p < input_ptr[i + 1]; p++) total_in += d[p];
            for (int64_t p = input_ptr[i]; p < input_ptr[i + 1]; p++) {
                int64_t l = pair_lane[p];
                double lev = level[l], f = 1.0, t = INFINITY;
                if (d[p] > 0) {
                    double grant = d[p] < lev ? d[p] : lev;
                    double slack = k[l] - lane_dem[l];
                    if (slack < 0.0) slack = 0.0;
                    double avail = isfinite(lev) ? lev : d[p] + slack;
                    if (!isfinite(lev) && more[l] > avail) avail = more[l];
                    f = grant / d[p];
                    t = avail * total_in / d[p];
                }
                if (f < f_min) f_min = f;
                if (t < t_min) t_min = t;
            }
            factor_in[i] = f_min;
            drain_in[i] = t_min;
        }
        /* departures: each row from its last hop back, so that depart[h - 1] is still the arrival at h;
         * summed from avg_from on */
        const int summing = averaging && iterations >= avg_from;
        const int final = iterations == max_iter && !averaging;  /* the last iterate is the result: sum its links */
        double hop_moved = 0.0;  /* the most a departure moved: a change on its way to the last hops */
        if (P) memset(d_next, 0, (size_t)P * sizeof(double));
        for (int64_t r = 0; r < R; r++) {
            int64_t h0 = r ? last[r - 1] + 1 : 0, hl = last[r];
            for (int64_t h = hl; h >= h0; h--) {
                double v = (h > h0 ? depart[h - 1] : row_dem[r]) * factor_in[hop_input[h]];
                double m = fabs(v - depart[h]);
                if (m > hop_moved || isnan(m)) hop_moved = m;
                depart[h] = v;
                if (summing) sum_depart[h] += v;
                if (final) link_rate[hop_out[h]] += v;
                if (h < hl) d_next[hop_pair[h + 1]] += v;
            }
            d_next[hop_pair[h0]] += row_dem[r];
        }
        double *swap = d;
        d = d_next;
        d_next = swap;
        link_rate_done = final;
        memcpy(new_cap, lane_cap, l1 * sizeof(double));
        for (int64_t i = 0; i < I; i++) {
            int64_t l = input_lane[i];
            if (l >= 0) new_cap[l] = lane_cap[l] < drain_in[i] ? lane_cap[l] : drain_in[i];
        }
        if (damp != 0.0)
            for (int64_t l = 0; l < L; l++) new_cap[l] = held_cap[l] + (1.0 - damp) * (new_cap[l] - held_cap[l]);
        double moved = 0.0;
        for (int64_t r = 0; r < R; r++) {
            new_rate[r] = depart[last[r]];
            double m = fabs(new_rate[r] - rate[r]);
            if (m > moved || isnan(m)) moved = m;
        }
        for (int64_t l = 0; l < L; l++) {
            double a1 = new_cap[l] < lane_dem[l] ? new_cap[l] : lane_dem[l];
            double a0 = held_cap[l] < lane_dem[l] ? held_cap[l] : lane_dem[l];
            double m = fabs(a1 - a0);
            if (m > moved || isnan(m)) moved = m;
        }
        if (L) memcpy(held_cap, new_cap, (size_t)L * sizeof(double));
        if (R) memcpy(rate, new_rate, (size_t)R * sizeof(double));
        if (summing)
            for (int64_t l = 0; l < L; l++) sum_cap[l] += held_cap[l];
        if (moved <= tol_abs && !(hop_moved > tol_abs) && iterations >= min_iter) {
            converged = 1;
            break;
        }
        if (moved >= last_moved * 0.9) damp = damping;
        last_moved = moved;
    }
    if (iterations > max_iter) iterations = max_iter;
    if (!converged && averaging) {
        /* a limit cycle: the window's mean iterate, and the arrivals at its departures (as the loop sums them) */
        averaged = max_iter - avg_from + 1;
        for (int64_t h = 0; h < H; h++) depart[h] = sum_depart[h] / (double)averaged;
        for (int64_t l = 0; l < L; l++) held_cap[l] = sum_cap[l] / (double)averaged;
        for (int64_t r = 0; r < R; r++) rate[r] = depart[last[r]];
        arrivals(R, P, last, hop_pair, row_dem, depart, d, 0, NULL);
        if (L) memset(lane_dem, 0, (size_t)L * sizeof(double));
        for (int64_t p = 0; p < P; p++) lane_dem[pair_lane[p]] += d[p];
    }
    if (!link_rate_done || averaged) {
        if (E) memset(link_rate, 0, (size_t)E * sizeof(double));
        for (int64_t h = 0; h < H; h++) link_rate[hop_out[h]] += depart[h];
    }
    if (R) memcpy(old_dem, row_dem, (size_t)R * sizeof(double));  /* for a solve carried on from this one */
    Py_END_ALLOW_THREADS
    result = Py_BuildValue("(LiLi)", iterations, converged, averaged, d == base ? 0 : 1);
done:
    for (int i = 0; i < N_ARGS; i++)
        if (a[i].held) PyBuffer_Release(&a[i].view);
    free(owned);
    return result;
}

/* limiting(last, out, link_score, rate, demand, best): each row's hop of the highest link score, the first of equals
 * (rows' hops contiguous, row r ending at hop last[r]); best[r] its link, -1 for a row at its demand (rate at least
 * 1 - 1e-6 of it). credit_tick.limiting_links in one pass over the hops. */
static PyObject *py_limiting(PyObject *self, PyObject *args) {
    PyObject *obj[6];
    if (!PyArg_ParseTuple(args, "OOOOOO", &obj[0], &obj[1], &obj[2], &obj[3], &obj[4], &obj[5])) return NULL;
    static const char *names[6] = {"last", "out", "link_score", "rate", "demand", "best"};
    static const char kinds[6] = "qqdddq";
    arg_t a[6];
    memset(a, 0, sizeof(a));
    PyObject *result = NULL;
    for (int i = 0; i < 6; i++)
        if (get_buffer(obj[i], &a[i], kinds[i], i == 5, names[i])) goto done;
    const int64_t R = a[0].n, H = a[1].n, E = a[2].n;
    const int64_t *last = a[0].view.buf, *out = a[1].view.buf;
    const double *score = a[2].view.buf, *rate = a[3].view.buf, *demand = a[4].view.buf;
    int64_t *best = a[5].view.buf;
    int ok = a[3].n == R && a[4].n == R && a[5].n == R && (R ? last[R - 1] == H - 1 : H == 0);
    for (int64_t r = 0; ok && r < R; r++) ok = last[r] >= (r ? last[r - 1] + 1 : 0);
    for (int64_t h = 0; ok && h < H; h++) ok = out[h] >= 0 && out[h] < E;
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "limiting: inconsistent hop tables");
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    for (int64_t r = 0, h = 0; r < R; r++) {
        if (!(rate[r] < demand[r] * (1 - 1e-6))) {  /* at its demand: held by nothing */
            best[r] = -1;
            h = last[r] + 1;
            continue;
        }
        int64_t arg = out[h];
        double top = score[arg];
        for (h++; h <= last[r]; h++)
            if (score[out[h]] > top) {
                top = score[out[h]];
                arg = out[h];
            }
        best[r] = arg;
    }
    Py_END_ALLOW_THREADS
    result = Py_None;
    Py_INCREF(result);
done:
    for (int i = 0; i < 6; i++)
        if (a[i].held) PyBuffer_Release(&a[i].view);
    return result;
}

/* work_size(pairs, rows, lanes, inputs, hops, widest, averaging): doubles of ``work`` a solve of those sizes uses. */
static PyObject *py_work_size(PyObject *self, PyObject *args) {
    long long n[6];
    int averaging;
    if (!PyArg_ParseTuple(args, "LLLLLLp", &n[0], &n[1], &n[2], &n[3], &n[4], &n[5], &averaging)) return NULL;
    for (int i = 0; i < 6; i++)
        if (n[i] < 0) {
            PyErr_SetString(PyExc_ValueError, "work_size: negative size");
            return NULL;
        }
    return PyLong_FromSize_t(work_need((size_t)n[0], (size_t)n[1], (size_t)n[2], (size_t)n[3], (size_t)n[4],
                                       (size_t)n[5], averaging));
}

static PyMethodDef methods[] = {
    {"work_size", py_work_size, METH_VARARGS,
     "work_size(pairs, rows, lanes, inputs, hops, widest, averaging) -> doubles of work a solve uses"},
    {"limiting", py_limiting, METH_VARARGS,
     "limiting(last, out, link_score, rate, demand, best): each row's link of the highest score, the first of "
     "equals; -1 for rows at their demand"},
    {"solve", py_solve, METH_VARARGS,
     "solve(hop tables..., work, n_vls, max_iter, min_iter, tol_abs, damping, start_mode, checked, avg_from, slot) -> "
     "(iterations, converged, averaged, slot); state arrays in place, the arrivals left in work's slot"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_credit",
                                    "The credit-flow-control fixed point of fabric_engine.backpressure.solve.", -1,
                                    methods};

PyMODINIT_FUNC PyInit__credit(void) { return PyModule_Create(&module); }
