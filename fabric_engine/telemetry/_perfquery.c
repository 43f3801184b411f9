/* The lexer of fabric_engine.telemetry.perfquery: one pass over perfquery's text.
 *
 * Why C: a sweep of the 40,960 switch ports of an 8,192-host fabric is 55 MB of text,
 * 1.6 million lines. Matching them with a regular expression and turning every match
 * into Python strings took 4 s of the 1 s a sweep may take (tests/bench/bench_telemetry.py);
 * this loop reads each byte once. It only classifies lines and reads numbers: every
 * check with a message (ranges, widths, order, stray lines) stays in perfquery.py.
 *
 * Lines, as the regular expressions of perfquery.py define them:
 *   header  "# Port counters: Lid N port P...", "# Port extended counters: Lid N port P...",
 *           "# PortRcvErrorDetails counters: ..." or "# PortXmitDiscardDetails counters: ..." (perfquery -E, -D)
 *   field   "Name:....value" (Name of [A-Za-z0-9_], dots, a value without spaces, trailing blanks)
 *   blank, or a comment (starting with '#'); anything else is a stray line.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define BIG_NUMBER (1LL << 40) /* a header number of more than 9 digits: outside every range */

enum { KIND_HEADER = 0, KIND_FIELD = 1 };

typedef struct {
    int8_t *kind;     /* per header or field line */
    int8_t *ext;      /* header: 0 PortCounters, 1 extended, 2 RcvErrorDetails, 3 XmitDiscardDetails */
    int64_t *line;    /* 1-based line number */
    int64_t *a;       /* header: LID; field: column (-1: not tracked) */
    int64_t *b;       /* header: port; field: 1 if the value is not a 64-bit decimal */
    uint64_t *value;  /* field value */
    int64_t n, cap;
} out_t;

static int grow(out_t *o) {
    int64_t cap = o->cap ? 2 * o->cap : 4096;
#define GROW(field, type)                                                   \
    do {                                                                    \
        type *p = realloc(o->field, (size_t)cap * sizeof(type));           \
        if (!p) return -1;                                                  \
        o->field = p;                                                       \
    } while (0)
    GROW(kind, int8_t);
    GROW(ext, int8_t);
    GROW(line, int64_t);
    GROW(a, int64_t);
    GROW(b, int64_t);
    GROW(value, uint64_t);
#undef GROW
    o->cap = cap;
    return 0;
}

static int is_word(unsigned char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

static int is_space(unsigned char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

/* Decimal digits at p (at most 9 kept): the value, or BIG_NUMBER; *len the digits read. */
static int64_t header_number(const unsigned char *p, const unsigned char *end, int64_t *len) {
    int64_t v = 0, n = 0;
    while (p + n < end && p[n] >= '0' && p[n] <= '9') {
        if (n < 10) v = v * 10 + (p[n] - '0');
        n++;
    }
    *len = n;
    return n > 9 ? BIG_NUMBER : v;
}

static int match(const unsigned char *p, const unsigned char *end, const char *lit) {
    size_t n = strlen(lit);
    return (size_t)(end - p) >= n && memcmp(p, lit, n) == 0;
}

/* A header line; returns 1 and fills ext, lid, port, or 0 if the line is not one. */
static int header(const unsigned char *p, const unsigned char *end, int8_t *ext, int64_t *lid, int64_t *port) {
    if (!match(p, end, "# Port")) return 0;
    p += 6;
    *ext = 0;
    if (match(p, end, " extended")) {
        *ext = 1;
        p += 9;
    } else if (match(p, end, "RcvErrorDetails")) {
        *ext = 2;
        p += 15;
    } else if (match(p, end, "XmitDiscardDetails")) {
        *ext = 3;
        p += 18;
    }
    if (!match(p, end, " counters: Lid ")) return 0;
    p += 15;
    int64_t len;
    *lid = header_number(p, end, &len);
    if (!len) return 0;
    p += len;
    if (!match(p, end, " port ")) return 0;
    p += 6;
    *port = header_number(p, end, &len);
    if (!len) return 0;
    p += len;
    return p == end || !is_word(*p); /* \b after the port */
}

/* A field line: name, ':', dots, value, trailing blanks; returns 1 with the name span and the value. */
static int field(const unsigned char *p, const unsigned char *end, const unsigned char **name, size_t *name_len,
                 uint64_t *value, int *bad) {
    const unsigned char *q = p;
    while (q < end && is_word(*q)) q++;
    if (q == p || q == end || *q != ':') return 0;
    *name = p;
    *name_len = (size_t)(q - p);
    q++;
    while (q < end && *q == '.') q++;
    const unsigned char *v = q;
    while (q < end && !is_space(*q)) q++;
    const unsigned char *v_end = q;
    while (q < end && (*q == ' ' || *q == '\t')) q++;
    if (q != end || v == v_end) return 0;
    /* the value: at most 20 decimal digits below 2^64 */
    uint64_t x = 0;
    *bad = (v_end - v) > 20;
    for (const unsigned char *c = v; !*bad && c < v_end; c++) {
        if (*c < '0' || *c > '9') {
            *bad = 1;
        } else {
            uint64_t d = (uint64_t)(*c - '0');
            if (x > (UINT64_MAX - d) / 10) *bad = 1;
            else x = x * 10 + d;
        }
    }
    *value = *bad ? 0 : x;
    return 1;
}

/* lex(text: bytes, names: tuple of bytes) -> (kind, ext, line, a, b, value as bytes, stray line or 0, lines) */
static PyObject *py_lex(PyObject *self, PyObject *args) {
    Py_buffer text;
    PyObject *names;
    if (!PyArg_ParseTuple(args, "y*O!", &text, &PyTuple_Type, &names)) return NULL;
    Py_ssize_t n_names = PyTuple_GET_SIZE(names);
    const char **name_p = malloc((size_t)(n_names ? n_names : 1) * sizeof(char *));
    Py_ssize_t *name_n = malloc((size_t)(n_names ? n_names : 1) * sizeof(Py_ssize_t));
    out_t o;
    memset(&o, 0, sizeof(o));
    PyObject *result = NULL;
    if (!name_p || !name_n) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n_names; i++) {
        PyObject *s = PyTuple_GET_ITEM(names, i);
        if (!PyBytes_Check(s)) {
            PyErr_SetString(PyExc_TypeError, "names must be bytes");
            goto done;
        }
        name_p[i] = PyBytes_AS_STRING(s);
        name_n[i] = PyBytes_GET_SIZE(s);
    }
    const unsigned char *p = text.buf, *end = p + text.len;
    int64_t line = 0, stray = 0;
    int failed = 0;
    Py_BEGIN_ALLOW_THREADS
    while (p < end) {
        const unsigned char *nl = memchr(p, '\n', (size_t)(end - p));
        const unsigned char *e = nl ? nl : end;
        line++;
        int8_t ext;
        int64_t lid, port;
        const unsigned char *nm;
        size_t nm_len;
        uint64_t value;
        int bad;
        if (o.n == o.cap && grow(&o)) {
            failed = 1;
            break;
        }
        if (p < e && *p == '#') {
            if (header(p, e, &ext, &lid, &port)) {
                o.kind[o.n] = KIND_HEADER;
                o.ext[o.n] = ext;
                o.line[o.n] = line;
                o.a[o.n] = lid;
                o.b[o.n] = port;
                o.value[o.n] = 0;
                o.n++;
            }
        } else if (field(p, e, &nm, &nm_len, &value, &bad)) {
            int64_t col = -1;
            for (Py_ssize_t i = 0; i < n_names; i++) {
                if ((size_t)name_n[i] == nm_len && memcmp(name_p[i], nm, nm_len) == 0) {
                    col = i;
                    break;
                }
            }
            o.kind[o.n] = KIND_FIELD;
            o.ext[o.n] = 0;
            o.line[o.n] = line;
            o.a[o.n] = col;
            o.b[o.n] = bad;
            o.value[o.n] = value;
            o.n++;
        } else {
            const unsigned char *q = p;
            while (q < e && (is_space(*q) || *q == '\n')) q++;
            if (q < e && !stray) stray = line;
        }
        p = nl ? nl + 1 : end;
    }
    Py_END_ALLOW_THREADS
    if (failed) {
        PyErr_NoMemory();
        goto done;
    }
    result = Py_BuildValue("(y#y#y#y#y#y#LL)", (char *)o.kind, (Py_ssize_t)o.n, (char *)o.ext, (Py_ssize_t)o.n,
                           (char *)o.line, (Py_ssize_t)(o.n * 8), (char *)o.a, (Py_ssize_t)(o.n * 8), (char *)o.b,
                           (Py_ssize_t)(o.n * 8), (char *)o.value, (Py_ssize_t)(o.n * 8), (long long)stray,
                           (long long)line);
done:
    free(o.kind);
    free(o.ext);
    free(o.line);
    free(o.a);
    free(o.b);
    free(o.value);
    free(name_p);
    free(name_n);
    PyBuffer_Release(&text);
    return result;
}

static PyMethodDef methods[] = {
    {"lex", py_lex, METH_VARARGS,
     "lex(text, names) -> (kind, ext, line, a, b, value, first_stray_line, lines): headers (kind 0: a LID, b port) "
     "and fields (kind 1: a the index of the name in names or -1, b 1 for a bad value) of perfquery's text"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_perfquery",
                                    "The lexer of fabric_engine.telemetry.perfquery.", -1, methods};

PyMODINIT_FUNC PyInit__perfquery(void) { return PyModule_Create(&module); }
