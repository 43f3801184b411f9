/* OpenSM's LID-by-LID least-loaded port choice, for the switches min-hop cannot route in closed form.
 *
 * Why C: the choice is sequential in the LIDs (each adapter LID adds one to the load of the port it
 * takes), so numpy can only vectorise over switches, scanning every port of every switch per LID:
 * switches x LIDs x ports. Here a LID costs only its candidate ports: the set bits of its target's
 * candidate set, visited in port order, the first least-loaded one kept (lowest port on ties, as
 * osm_ucast_mgr.c's least-loaded selection and numpy's argmin). On a SuperPOD with an Aggregation
 * Node on every switch (no switch is laminar) that is a few candidates per (switch, LID).
 *
 * greedy(keys, rows, targets, lids, counted, lft): for each switch row r in rows, with loads zeroed,
 * for each visited LID k: t = targets[k]; candidates = bits of keys[r, t, :]; the chosen port p (0-based)
 * gives lft[r, lids[k]] = p + 1, and load[p] += 1 when counted[k]. A LID without candidates is left
 * as it is. keys is uint64 [S, T, W] C-contiguous, lft uint8 [S, L] C-contiguous (written in place).
 * Only Python's buffer protocol is used; the GIL is released while choosing.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

typedef struct {
    Py_buffer view;
    int held;
} buf_t;

/* A C-contiguous buffer of items of ``size`` bytes, integers of format ``kinds`` (e.g. "qlQL"). */
static int get(PyObject *obj, buf_t *b, Py_ssize_t size, const char *kinds, int writable, const char *name) {
    b->held = 0;
    if (PyObject_GetBuffer(obj, &b->view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0)))
        return -1;
    b->held = 1;
    const char *f = b->view.format ? b->view.format : "B";
    if (f[0] == '<' || f[0] == '=' || f[0] == '@') f++;
    if (b->view.itemsize != size || f[1] != '\0' || !strchr(kinds, f[0])) {
        PyErr_Format(PyExc_TypeError, "%s: expected a contiguous array of %zd-byte integers", name, size);
        return -1;
    }
    return 0;
}

static PyObject *py_greedy(PyObject *self, PyObject *args) {
    PyObject *obj[6];
    if (!PyArg_UnpackTuple(args, "greedy", 6, 6, &obj[0], &obj[1], &obj[2], &obj[3], &obj[4], &obj[5])) return NULL;
    static const char *names[6] = {"keys", "rows", "targets", "lids", "counted", "lft"};
    static const Py_ssize_t sizes[6] = {8, 8, 8, 8, 1, 1};
    static const char *kinds[6] = {"QL", "ql", "ql", "ql", "B?", "B"};
    buf_t b[6];
    memset(b, 0, sizeof(b));
    PyObject *result = NULL;
    int32_t *load = NULL;
    for (int i = 0; i < 6; i++)
        if (get(obj[i], &b[i], sizes[i], kinds[i], i == 5, names[i])) goto done;
    if (b[0].view.ndim != 3 || b[5].view.ndim != 2) {
        PyErr_SetString(PyExc_ValueError, "greedy: keys must be [S, T, W] and lft [S, L]");
        goto done;
    }
    const uint64_t *keys = b[0].view.buf;
    const int64_t *rows = b[1].view.buf, *targets = b[2].view.buf, *lids = b[3].view.buf;
    const uint8_t *counted = b[4].view.buf;
    uint8_t *lft = b[5].view.buf;
    Py_ssize_t S = b[0].view.shape[0], T = b[0].view.shape[1], W = b[0].view.shape[2], L = b[5].view.shape[1];
    Py_ssize_t R = b[1].view.len / 8, K = b[2].view.len / 8;
    if (b[3].view.len / 8 != K || b[4].view.len != K || b[5].view.shape[0] != S) {
        PyErr_SetString(PyExc_ValueError, "greedy: targets, lids and counted differ in length, or lft is not [S, L]");
        goto done;
    }
    for (Py_ssize_t i = 0; i < R; i++)
        if (rows[i] < 0 || rows[i] >= S) { PyErr_SetString(PyExc_ValueError, "greedy: a row outside keys"); goto done; }
    for (Py_ssize_t k = 0; k < K; k++)
        if (targets[k] < 0 || targets[k] >= T || lids[k] < 0 || lids[k] >= L) {
            PyErr_SetString(PyExc_ValueError, "greedy: a target or LID outside keys or lft");
            goto done;
        }
    load = PyMem_Calloc((size_t)W * 64, sizeof(int32_t));
    if (!load) { PyErr_NoMemory(); goto done; }
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < R; i++) {
        int64_t r = rows[i];
        memset(load, 0, (size_t)W * 64 * sizeof(int32_t));
        const uint64_t *row = keys + (size_t)r * T * W;
        uint8_t *out = lft + (size_t)r * L;
        for (Py_ssize_t k = 0; k < K; k++) {
            const uint64_t *set = row + (size_t)targets[k] * W;
            int best = -1;
            for (Py_ssize_t w = 0; w < W; w++) {
                for (uint64_t bits = set[w]; bits; bits &= bits - 1) {
                    int p = (int)(w * 64 + __builtin_ctzll(bits));
                    if (best < 0 || load[p] < load[best]) best = p;
                }
            }
            if (best < 0) continue;
            out[lids[k]] = (uint8_t)(best + 1);
            if (counted[k]) load[best]++;
        }
    }
    Py_END_ALLOW_THREADS
    Py_INCREF(Py_None);
    result = Py_None;
done:
    PyMem_Free(load);
    for (int i = 0; i < 6; i++)
        if (b[i].held) PyBuffer_Release(&b[i].view);
    return result;
}

static PyMethodDef methods[] = {
    {"greedy", py_greedy, METH_VARARGS,
     "greedy(keys, rows, targets, lids, counted, lft): OpenSM's least-loaded port per LID, LID by LID, for the "
     "switch rows given (see the module source)"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_lidgreedy",
                                    "Compiled LID-by-LID least-loaded port choice (see fabric_engine.routing.minhop).",
                                    -1, methods};

PyMODINIT_FUNC PyInit__lidgreedy(void) { return PyModule_Create(&module); }
