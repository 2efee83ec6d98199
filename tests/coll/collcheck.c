/* SPDX-License-Identifier: BSD-3-Clause */
/* collcheck: checks Hashi's collectives (libhashi-coll) against MPICH's own.
 *
 * Every case runs one collective twice on the same inputs: once through
 * MPI_* (which the wrappers link to libhashi-coll, so the algorithm the
 * selector picks, or the one forced with HASHI_COLL_<COLL>) and once
 * through PMPI_* (MPICH's own), then compares the results on every rank:
 * bitwise for integer, logical, byte and pair types and for data movement,
 * within the rounding an order change allows for floating point sums and
 * products. It also checks that the send buffer is unchanged and that no
 * byte outside the data of the receive buffer (holes of derived types,
 * bytes before and after it) was written.
 *
 * Inputs are a hash of (seed, case, rank, element, component), so any rank
 * can be reproduced alone, and are chosen per operation so integer sums
 * and products never overflow and floating point sums stay well
 * conditioned. Cases run on MPI_COMM_WORLD and on communicators split from
 * it (odd/even, reversed, shuffled, one cluster cut down to one rank) so
 * that clusters are split unevenly and non-contiguously.
 *
 * Output: one line per failing case with everything needed to rerun it,
 * then per collective and overall "collcheck: N cases, F failed"; the exit
 * status is 1 when any case failed, 2 for bad options. `--help` lists the
 * options. */
#include <mpi.h>

#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <wchar.h>

/* ---- element kinds: the basic values a datatype's type map is made of -- */
enum kind { K_I8, K_U8, K_I16, K_U16, K_I32, K_U32, K_I64, K_U64, K_F32, K_F64, K_LD, K_BOOL, K_FLOG, K_CHAR, NKINDS };
static const int kind_bytes[NKINDS] = {1, 1, 2, 2, 4, 4, 8, 8, 4, 8, sizeof(long double), 1, 4, 1};
static int kind_float(int k)
{
    return k == K_F32 || k == K_F64 || k == K_LD;
}
static int kind_signed(int k)
{
    return k == K_I8 || k == K_I16 || k == K_I32 || k == K_I64;
}
static int skind(size_t bytes)
{
    return bytes == 1 ? K_I8 : bytes == 2 ? K_I16 : bytes == 4 ? K_I32 : K_I64;
}
static int ukind(size_t bytes)
{
    return bytes == 1 ? K_U8 : bytes == 2 ? K_U16 : bytes == 4 ? K_U32 : K_U64;
}
static long double kind_eps(int k)
{
    return k == K_F32 ? FLT_EPSILON : k == K_F64 ? DBL_EPSILON : LDBL_EPSILON;
}

/* ---- datatypes --------------------------------------------------------- */
/* Type families: which predefined ops MPI allows on a type (MPI 4.0, 6.9.2). */
enum { F_CINT = 1, F_FINT = 2, F_FLOAT = 4, F_COMPLEX = 8, F_LOGICAL = 16, F_BYTE = 32, F_PAIR = 64, F_OTHER = 128 };
/* User-defined ops a type may be given (see the op functions below). */
enum { U_COMM = 1, U_FIRST = 2, U_AFFINE = 4 };

#define MAXCOMP 4
struct ttype {
    char name[40];
    MPI_Datatype dt;
    int family;
    int ncomp; /* components of one element, in type-map (= packed) order */
    int kind[MAXCOMP];
    MPI_Aint off[MAXCOMP]; /* byte offset of each component in an element */
    int complex; /* components are (real, imaginary) pairs */
    int derived;
    /* Homogeneous derived types: `nbasic` elements of `basic` make one
     * element, so a send can use one type and the receive the other. */
    MPI_Datatype basic;
    int nbasic;
    int user; /* U_* bits */
    const char* core_op; /* core: the op (any op for data movement) that gets every count */
    int quick;
    MPI_Aint extent, true_lb;
    int size;
};
#define MAXTYPES 80
static struct ttype types[MAXTYPES];
static int ntypes;
static char unavailable[1024]; /* predefined types this MPI does not have */

static struct ttype* add_type(const char* name, MPI_Datatype dt, int family, int k0, int k1, MPI_Aint off1)
{
    if (dt == MPI_DATATYPE_NULL) {
        if (strlen(unavailable) + strlen(name) + 2 < sizeof unavailable)
            strcat(strcat(unavailable, " "), name);
        return NULL;
    }
    struct ttype* t = &types[ntypes++];
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "%s", name);
    t->dt = dt;
    t->family = family;
    t->kind[0] = k0;
    t->ncomp = 1;
    if (k1 >= 0) {
        t->kind[1] = k1;
        t->off[1] = off1;
        t->ncomp = 2;
    }
    t->basic = MPI_DATATYPE_NULL;
    return t;
}

/* Fortran types have the sizes of this build's Fortran compiler. */
static int type_bytes(MPI_Datatype dt)
{
    int s = 0;
    if (dt != MPI_DATATYPE_NULL)
        PMPI_Type_size(dt, &s);
    return s;
}

struct s_float_int {
    float v;
    int i;
};
struct s_double_int {
    double v;
    int i;
};
struct s_long_int {
    long v;
    int i;
};
struct s_short_int {
    short v;
    int i;
};
struct s_ldouble_int {
    long double v;
    int i;
};

#define PRE(NAME, FAM, K) add_type(#NAME, NAME, FAM, K, -1, 0)
#define PAIR(NAME, K0, K1, OFF) add_type(#NAME, NAME, F_PAIR, K0, K1, OFF)
#define CPLX(NAME, K, BYTES)                                                                                           \
    do {                                                                                                               \
        struct ttype* t_ = add_type(#NAME, NAME, F_COMPLEX, K, K, BYTES);                                              \
        if (t_)                                                                                                        \
            t_->complex = 1;                                                                                           \
    } while (0)

static void make_types(void)
{
    /* C integer */
    PRE(MPI_SIGNED_CHAR, F_CINT, K_I8);
    struct ttype* uc = PRE(MPI_UNSIGNED_CHAR, F_CINT, K_U8);
    PRE(MPI_SHORT, F_CINT, skind(sizeof(short)));
    PRE(MPI_UNSIGNED_SHORT, F_CINT, ukind(sizeof(short)));
    struct ttype* ti = PRE(MPI_INT, F_CINT, skind(sizeof(int)));
    PRE(MPI_UNSIGNED, F_CINT, ukind(sizeof(int)));
    PRE(MPI_LONG, F_CINT, skind(sizeof(long)));
    struct ttype* ul = PRE(MPI_UNSIGNED_LONG, F_CINT, ukind(sizeof(long)));
    PRE(MPI_LONG_LONG, F_CINT, skind(sizeof(long long)));
    PRE(MPI_UNSIGNED_LONG_LONG, F_CINT, ukind(sizeof(long long)));
    PRE(MPI_INT8_T, F_CINT, K_I8);
    PRE(MPI_INT16_T, F_CINT, K_I16);
    PRE(MPI_INT32_T, F_CINT, K_I32);
    PRE(MPI_INT64_T, F_CINT, K_I64);
    PRE(MPI_UINT8_T, F_CINT, K_U8);
    PRE(MPI_UINT16_T, F_CINT, K_U16);
    PRE(MPI_UINT32_T, F_CINT, K_U32);
    PRE(MPI_UINT64_T, F_CINT, K_U64);
    /* Fortran and multi-language integers */
    PRE(MPI_INTEGER, F_FINT, skind(type_bytes(MPI_INTEGER)));
    PRE(MPI_INTEGER1, F_FINT, K_I8);
    PRE(MPI_INTEGER2, F_FINT, K_I16);
    PRE(MPI_INTEGER4, F_FINT, K_I32);
    PRE(MPI_INTEGER8, F_FINT, K_I64);
    PRE(MPI_AINT, F_FINT, skind(sizeof(MPI_Aint)));
    PRE(MPI_OFFSET, F_FINT, skind(sizeof(MPI_Offset)));
    PRE(MPI_COUNT, F_FINT, skind(sizeof(MPI_Count)));
    /* floating point */
    PRE(MPI_FLOAT, F_FLOAT, K_F32);
    struct ttype* td = PRE(MPI_DOUBLE, F_FLOAT, K_F64);
    struct ttype* tld = PRE(MPI_LONG_DOUBLE, F_FLOAT, K_LD);
    PRE(MPI_REAL, F_FLOAT, type_bytes(MPI_REAL) == 8 ? K_F64 : K_F32);
    PRE(MPI_DOUBLE_PRECISION, F_FLOAT, K_F64);
    PRE(MPI_REAL4, F_FLOAT, K_F32);
    PRE(MPI_REAL8, F_FLOAT, K_F64);
    /* complex */
    CPLX(MPI_C_FLOAT_COMPLEX, K_F32, 4);
    CPLX(MPI_C_DOUBLE_COMPLEX, K_F64, 8);
    CPLX(MPI_C_LONG_DOUBLE_COMPLEX, K_LD, (MPI_Aint)sizeof(long double));
    CPLX(MPI_COMPLEX, K_F32, 4);
    CPLX(MPI_DOUBLE_COMPLEX, K_F64, 8);
    CPLX(MPI_COMPLEX8, K_F32, 4);
    CPLX(MPI_COMPLEX16, K_F64, 8);
    CPLX(MPI_CXX_FLOAT_COMPLEX, K_F32, 4);
    CPLX(MPI_CXX_DOUBLE_COMPLEX, K_F64, 8);
    CPLX(MPI_CXX_LONG_DOUBLE_COMPLEX, K_LD, (MPI_Aint)sizeof(long double));
    /* logical, byte, characters (data movement only) */
    PRE(MPI_C_BOOL, F_LOGICAL, K_BOOL);
    PRE(MPI_CXX_BOOL, F_LOGICAL, K_BOOL);
    PRE(MPI_LOGICAL, F_LOGICAL, K_FLOG);
    PRE(MPI_BYTE, F_BYTE, K_U8);
    PRE(MPI_CHAR, F_OTHER, K_CHAR);
    PRE(MPI_WCHAR, F_OTHER, skind(sizeof(wchar_t)));
    /* MINLOC/MAXLOC pairs */
    struct ttype* t2i = PAIR(MPI_2INT, K_I32, K_I32, 4);
    struct ttype* tfi = PAIR(MPI_FLOAT_INT, K_F32, K_I32, offsetof(struct s_float_int, i));
    PAIR(MPI_DOUBLE_INT, K_F64, K_I32, offsetof(struct s_double_int, i));
    PAIR(MPI_LONG_INT, skind(sizeof(long)), K_I32, offsetof(struct s_long_int, i));
    PAIR(MPI_SHORT_INT, skind(sizeof(short)), K_I32, offsetof(struct s_short_int, i));
    PAIR(MPI_LONG_DOUBLE_INT, K_LD, K_I32, offsetof(struct s_ldouble_int, i));
    PAIR(MPI_2INTEGER, skind(type_bytes(MPI_INTEGER)), skind(type_bytes(MPI_INTEGER)), type_bytes(MPI_INTEGER));
    PAIR(MPI_2REAL, K_F32, K_F32, 4);
    PAIR(MPI_2DOUBLE_PRECISION, K_F64, K_F64, 8);

    /* derived types: holes, lower bounds, a struct, a contiguous block */
    MPI_Datatype dt;
    struct ttype* t;
    PMPI_Type_vector(2, 1, 3, MPI_INT, &dt); /* int, 2-int gap, int */
    PMPI_Type_commit(&dt);
    t = add_type("vector(2,1,3,int)", dt, F_CINT, K_I32, K_I32, 12);
    t->derived = 1, t->basic = MPI_INT, t->nbasic = 2, t->user = U_COMM | U_FIRST, t->quick = 1;
    t->core_op = "user_commutative";

    PMPI_Type_create_resized(MPI_DOUBLE, 0, 16, &dt); /* a double, then 8 unused bytes */
    PMPI_Type_commit(&dt);
    t = add_type("resized(double,0,16)", dt, F_FLOAT, K_F64, -1, 0);
    t->derived = 1, t->basic = MPI_DOUBLE, t->nbasic = 1, t->user = U_COMM, t->core_op = "user_commutative";

    /* Data starts 8 bytes after the buffer address (lb = true_lb = 8): an
     * algorithm that forgets the lower bound of its scratch space shows. */
    int bl = 2;
    MPI_Aint disp = 8;
    PMPI_Type_create_hindexed(1, &bl, &disp, MPI_INT, &dt);
    PMPI_Type_commit(&dt);
    t = add_type("hindexed(2int@8)", dt, F_CINT, K_I32, K_I32, 12);
    t->off[0] = 8;
    t->derived = 1, t->basic = MPI_INT, t->nbasic = 2, t->user = U_COMM, t->core_op = "user_commutative";

    PMPI_Type_create_resized(MPI_INT, -4, 12, &dt); /* negative lower bound */
    PMPI_Type_commit(&dt);
    t = add_type("resized(int,-4,12)", dt, F_CINT, K_I32, -1, 0);
    t->derived = 1, t->basic = MPI_INT, t->nbasic = 1, t->user = U_COMM, t->core_op = "user_commutative";

    PMPI_Type_contiguous(3, MPI_LONG, &dt);
    PMPI_Type_commit(&dt);
    t = add_type("contiguous(3,long)", dt, F_CINT, skind(sizeof(long)), skind(sizeof(long)), sizeof(long));
    t->ncomp = 3, t->kind[2] = skind(sizeof(long)), t->off[2] = 2 * sizeof(long);
    t->derived = 1, t->basic = MPI_LONG, t->nbasic = 3, t->user = U_COMM;

    /* Heterogeneous: no predefined op applies, user ops and data movement do. */
    struct sid {
        int i;
        double d;
    };
    int sbl[2] = {1, 1};
    MPI_Aint sdisp[2] = {offsetof(struct sid, i), offsetof(struct sid, d)};
    MPI_Datatype stypes[2] = {MPI_INT, MPI_DOUBLE};
    PMPI_Type_create_struct(2, sbl, sdisp, stypes, &dt);
    PMPI_Type_commit(&dt);
    t = add_type("struct{int;double}", dt, F_OTHER, K_I32, K_F64, offsetof(struct sid, d));
    t->derived = 1, t->user = U_COMM | U_FIRST, t->quick = 1, t->core_op = "user_commutative";

    PMPI_Type_contiguous(2, MPI_UNSIGNED, &dt);
    PMPI_Type_commit(&dt);
    t = add_type("contiguous(2,unsigned)", dt, F_CINT, K_U32, K_U32, 4);
    t->derived = 1, t->basic = MPI_UNSIGNED, t->nbasic = 2, t->user = U_AFFINE;

    /* Predefined types with user ops, in the quick set, and the core pairs. */
    ti->user = U_COMM | U_FIRST, ti->quick = 1, ti->core_op = "MPI_SUM";
    td->user = U_COMM | U_FIRST, td->quick = 1, td->core_op = "MPI_SUM";
    tld->user = U_COMM, tld->core_op = "MPI_PROD";
    ul->user = U_COMM;
    uc->quick = 1, uc->core_op = "MPI_BXOR";
    tfi->user = U_COMM, tfi->quick = 1, tfi->core_op = "MPI_MINLOC";
    t2i->user = U_AFFINE, t2i->quick = 1, t2i->core_op = "user_noncommutative_affine";
    for (int i = 0; i < ntypes; ++i) {
        if (types[i].dt == MPI_C_DOUBLE_COMPLEX)
            types[i].quick = 1, types[i].core_op = "MPI_PROD";
        if (types[i].dt == MPI_LONG_DOUBLE_INT)
            types[i].core_op = "MPI_MAXLOC";
        if (types[i].dt == MPI_C_BOOL)
            types[i].quick = 1;
    }
}

/* A type is usable when MPI's view of it matches ours (a build whose
 * Fortran types have other sizes would otherwise give false failures). */
static void check_types(void)
{
    int n = 0;
    for (int i = 0; i < ntypes; ++i) {
        struct ttype* t = &types[i];
        MPI_Aint lb;
        MPI_Aint text;
        PMPI_Type_get_extent(t->dt, &lb, &t->extent);
        PMPI_Type_get_true_extent(t->dt, &t->true_lb, &text);
        PMPI_Type_size(t->dt, &t->size);
        int sum = 0;
        for (int c = 0; c < t->ncomp; ++c)
            sum += kind_bytes[t->kind[c]];
        if (sum != t->size) {
            if (strlen(unavailable) + strlen(t->name) + 24 < sizeof unavailable)
                sprintf(unavailable + strlen(unavailable), " %s(size %d)", t->name, t->size);
            continue;
        }
        types[n++] = *t;
    }
    ntypes = n;
}

static const struct ttype* find_type(MPI_Datatype dt)
{
    for (int i = 0; i < ntypes; ++i)
        if (types[i].dt == dt)
            return &types[i];
    return NULL;
}

/* ---- values: loading and storing one component ------------------------ */
static void store_int(int k, uint64_t v, unsigned char* out)
{
    switch (kind_bytes[k]) {
    case 1: {
        uint8_t x = (uint8_t)v;
        memcpy(out, &x, 1);
        break;
    }
    case 2: {
        uint16_t x = (uint16_t)v;
        memcpy(out, &x, 2);
        break;
    }
    case 4: {
        uint32_t x = (uint32_t)v;
        memcpy(out, &x, 4);
        break;
    }
    default:
        memcpy(out, &v, 8);
    }
}

static void store_float(int k, long double v, unsigned char* out)
{
    if (k == K_F32) {
        float x = (float)v;
        memcpy(out, &x, 4);
    } else if (k == K_F64) {
        double x = (double)v;
        memcpy(out, &x, 8);
    } else {
        /* Only the value bytes of a long double are defined; zero the rest
         * so that data movement of generated values compares bitwise. */
        memset(out, 0, sizeof(long double));
        memcpy(out, &v, LDBL_MANT_DIG == 64 ? 10 : sizeof v);
    }
}

static long double load_float(int k, const unsigned char* p)
{
    if (k == K_F32) {
        float x;
        memcpy(&x, p, 4);
        return x;
    }
    if (k == K_F64) {
        double x;
        memcpy(&x, p, 8);
        return x;
    }
    long double x;
    memcpy(&x, p, sizeof x);
    return x;
}

static uint64_t load_uint(int k, const unsigned char* p)
{
    uint64_t v = 0;
    memcpy(&v, p, kind_bytes[k]); /* little-endian: the low bytes */
    return v;
}

/* Types that break MPICH 4.0.2's own collectives: a nonzero true lower
 * bound (its shared-memory reduce frees a shifted pointer; allreduce and
 * reduce over the network give wrong results) and the pair types of two
 * different basic types (MPI_FLOAT_INT, ...: its Brucks alltoall divides by
 * zero counting their elements when 8 or more ranks span nodes). No
 * reference call is made for them, ours is compared with the exact result
 * only, and they run only where a Hashi algorithm is forced (enumerate). */
static int no_reference(const struct ttype* t)
{
    return t->true_lb != 0 || (t->family == F_PAIR && t->kind[0] != t->kind[1]);
}

/* ---- operations -------------------------------------------------------- */
enum cls {
    OC_DATA, /* data movement: no op */
    OC_MAX,
    OC_MIN,
    OC_SUM,
    OC_PROD,
    OC_LAND,
    OC_LOR,
    OC_LXOR,
    OC_BAND,
    OC_BOR,
    OC_BXOR,
    OC_MINLOC,
    OC_MAXLOC,
    OC_UCOMM,
    OC_UFIRST,
    OC_UAFFINE
};
struct top {
    const char* name;
    MPI_Op op;
    int cls;
    int families; /* predefined ops: the families MPI allows */
    int user; /* user ops: the U_* bit a type must have */
};
#define MAXOPS 16
static struct top ops[MAXOPS];
static int nops;
/* A user function called with a datatype the program never passed. */
static char foreign_type_seen;

/* The type a user function was called with, or NULL (and a note) when the
 * program never passed it. */
static const struct ttype* user_type(MPI_Datatype dt)
{
    const struct ttype* t = find_type(dt);
    if (!t)
        foreign_type_seen = 1;
    return t;
}

/* Commutative user op: wrapping integer add, max of floating point values,
 * or of logicals; exact, so its results compare bitwise. */
static void user_comm_fn(void* in, void* inout, int* len, MPI_Datatype* dtp)
{
    const struct ttype* t = user_type(*dtp);
    if (!t)
        return;
    for (int i = 0; i < *len; ++i)
        for (int c = 0; c < t->ncomp; ++c) {
            const int k = t->kind[c];
            const unsigned char* a = (unsigned char*)in + i * t->extent + t->off[c];
            unsigned char* b = (unsigned char*)inout + i * t->extent + t->off[c];
            if (kind_float(k)) {
                if (load_float(k, a) > load_float(k, b))
                    memcpy(b, a, kind_bytes[k]);
            } else if (k == K_BOOL || k == K_FLOG) {
                store_int(k, load_uint(k, a) || load_uint(k, b), b);
            } else {
                store_int(k, load_uint(k, a) + load_uint(k, b), b);
            }
        }
}

/* Non-commutative: a op b = a, so the result is rank 0's value and any
 * other order shows. */
static void user_first_fn(void* in, void* inout, int* len, MPI_Datatype* dtp)
{
    const struct ttype* t = user_type(*dtp);
    if (!t)
        return;
    for (int i = 0; i < *len; ++i)
        for (int c = 0; c < t->ncomp; ++c)
            memcpy((char*)inout + i * t->extent + t->off[c], (char*)in + i * t->extent + t->off[c],
                kind_bytes[t->kind[c]]);
}

/* Non-commutative: composition of affine maps x -> a*x + b mod 2^32 on
 * (a, b) pairs; associative, and every permutation of the operands gives
 * another result. */
static void user_affine_fn(void* in, void* inout, int* len, MPI_Datatype* dtp)
{
    const struct ttype* t = user_type(*dtp);
    if (!t || t->ncomp != 2 || kind_bytes[t->kind[0]] != 4 || kind_bytes[t->kind[1]] != 4) {
        foreign_type_seen = 1;
        return;
    }
    for (int i = 0; i < *len; ++i) {
        uint32_t a1, b1, a2, b2;
        char* p = (char*)in + i * t->extent;
        char* q = (char*)inout + i * t->extent;
        memcpy(&a1, p + t->off[0], 4), memcpy(&b1, p + t->off[1], 4);
        memcpy(&a2, q + t->off[0], 4), memcpy(&b2, q + t->off[1], 4);
        const uint32_t a = a1 * a2, b = a2 * b1 + b2;
        memcpy(q + t->off[0], &a, 4), memcpy(q + t->off[1], &b, 4);
    }
}

static void add_op(const char* name, MPI_Op op, int cls, int families, int user)
{
    ops[nops++] = (struct top) {name, op, cls, families, user};
}

static void make_ops(void)
{
    const int num = F_CINT | F_FINT | F_FLOAT;
    add_op("MPI_MAX", MPI_MAX, OC_MAX, num, 0);
    add_op("MPI_MIN", MPI_MIN, OC_MIN, num, 0);
    add_op("MPI_SUM", MPI_SUM, OC_SUM, num | F_COMPLEX, 0);
    add_op("MPI_PROD", MPI_PROD, OC_PROD, num | F_COMPLEX, 0);
    add_op("MPI_LAND", MPI_LAND, OC_LAND, F_CINT | F_LOGICAL, 0);
    add_op("MPI_LOR", MPI_LOR, OC_LOR, F_CINT | F_LOGICAL, 0);
    add_op("MPI_LXOR", MPI_LXOR, OC_LXOR, F_CINT | F_LOGICAL, 0);
    add_op("MPI_BAND", MPI_BAND, OC_BAND, F_CINT | F_FINT | F_BYTE, 0);
    add_op("MPI_BOR", MPI_BOR, OC_BOR, F_CINT | F_FINT | F_BYTE, 0);
    add_op("MPI_BXOR", MPI_BXOR, OC_BXOR, F_CINT | F_FINT | F_BYTE, 0);
    add_op("MPI_MINLOC", MPI_MINLOC, OC_MINLOC, F_PAIR, 0);
    add_op("MPI_MAXLOC", MPI_MAXLOC, OC_MAXLOC, F_PAIR, 0);
    MPI_Op op;
    PMPI_Op_create(user_comm_fn, 1, &op);
    add_op("user_commutative", op, OC_UCOMM, 0, U_COMM);
    PMPI_Op_create(user_first_fn, 0, &op);
    add_op("user_noncommutative_first", op, OC_UFIRST, 0, U_FIRST);
    PMPI_Op_create(user_affine_fn, 0, &op);
    add_op("user_noncommutative_affine", op, OC_UAFFINE, 0, U_AFFINE);
}

/* Which (type, op) pairs are tested: MPI's rules, minus what this MPICH
 * refuses for a local reduction (reported once at start). */
static unsigned char allowed[MAXTYPES][MAXOPS];
static int refused;
static char refused_list[2048];

/* ---- buffers: typed, with holes and guards checked ----------------------- */
#define GUARD 64
#define SENTINEL 0xA5
struct block {
    MPI_Aint disp; /* in elements of the buffer's type */
    int count;
};
struct tbuf {
    unsigned char* mem;
    unsigned char* mask; /* 1 where a byte belongs to the data of a block */
    size_t len;
    unsigned char* buf; /* what is passed to MPI */
    MPI_Datatype dt;
    MPI_Aint extent;
    int size;
};

static void* xmalloc(size_t n)
{
    void* p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "collcheck: out of memory (%zu bytes)\n", n);
        PMPI_Abort(MPI_COMM_WORLD, 3);
    }
    return p;
}

/* Allocates the smallest region holding the blocks, plus guards, and marks
 * which bytes are data by unpacking 0xFF bytes into a zeroed copy. */
static void tb_init(struct tbuf* b, MPI_Datatype dt, const struct block* bl, int nb)
{
    MPI_Aint lb, tlb, text;
    PMPI_Type_get_extent(dt, &lb, &b->extent);
    PMPI_Type_get_true_extent(dt, &tlb, &text);
    PMPI_Type_size(dt, &b->size);
    b->dt = dt;
    MPI_Aint lo = 0, hi = 0, most = 0;
    for (int i = 0; i < nb; ++i) {
        if (bl[i].count <= 0)
            continue;
        const MPI_Aint a = bl[i].disp * b->extent + tlb;
        const MPI_Aint z = (bl[i].disp + bl[i].count - 1) * b->extent + tlb + text;
        lo = a < lo ? a : lo;
        hi = z > hi ? z : hi;
        most = bl[i].count > most ? bl[i].count : most;
    }
    b->len = (size_t)(hi - lo) + 2 * GUARD;
    b->mem = xmalloc(b->len);
    b->mask = xmalloc(b->len);
    memset(b->mem, 0, b->len);
    b->buf = b->mem + GUARD - lo;
    unsigned char* ones = xmalloc((size_t)most * b->size);
    memset(ones, 0xFF, (size_t)most * b->size);
    for (int i = 0; i < nb; ++i) {
        int pos = 0;
        if (bl[i].count > 0)
            PMPI_Unpack(
                ones, bl[i].count * b->size, &pos, b->buf + bl[i].disp * b->extent, bl[i].count, dt, MPI_COMM_SELF);
    }
    free(ones);
    for (size_t i = 0; i < b->len; ++i)
        b->mask[i] = b->mem[i] == 0xFF;
    memset(b->mem, SENTINEL, b->len);
}

static void tb_free(struct tbuf* b)
{
    free(b->mem);
    free(b->mask);
    b->mem = b->mask = NULL;
}

/* Unpacks (fill) or packs a stream of packed elements into or out of the blocks. */
static void tb_fill(struct tbuf* b, const struct block* bl, int nb, const unsigned char* stream)
{
    MPI_Aint at = 0;
    for (int i = 0; i < nb; ++i) {
        int pos = 0;
        if (bl[i].count <= 0)
            continue;
        PMPI_Unpack(stream + at, bl[i].count * b->size, &pos, b->buf + bl[i].disp * b->extent, bl[i].count, b->dt,
            MPI_COMM_SELF);
        at += (MPI_Aint)bl[i].count * b->size;
    }
}

static void tb_pack(const struct tbuf* b, const struct block* bl, int nb, unsigned char* stream)
{
    MPI_Aint at = 0;
    for (int i = 0; i < nb; ++i) {
        int pos = 0;
        if (bl[i].count <= 0)
            continue;
        PMPI_Pack(b->buf + bl[i].disp * b->extent, bl[i].count, b->dt, stream + at, bl[i].count * b->size, &pos,
            MPI_COMM_SELF);
        at += (MPI_Aint)bl[i].count * b->size;
    }
}

/* Offset (from the buffer address) of the first byte outside the data that
 * changed, or LONG_MIN when none did. */
static long tb_stray_write(const struct tbuf* b)
{
    for (size_t i = 0; i < b->len; ++i)
        if (!b->mask[i] && b->mem[i] != SENTINEL)
            return (long)((b->mem + i) - b->buf);
    return LONG_MIN;
}

static MPI_Aint blocks_elems(const struct block* bl, int nb)
{
    MPI_Aint n = 0;
    for (int i = 0; i < nb; ++i)
        n += bl[i].count > 0 ? bl[i].count : 0;
    return n;
}

/* ---- deterministic inputs ---------------------------------------------- */
static uint64_t mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* One component of one element of rank `rank`'s input for an op class. */
static void gen_one(int k, int cls, uint64_t h, int rank, int P, MPI_Aint e, int c, unsigned char* out)
{
    const uint64_t h2 = mix64(h);
    const long double u = (long double)(h >> 11) * 0x1p-53L + (long double)(h2 >> 11) * 0x1p-106L; /* [0, 1) */
    if (cls == OC_MINLOC || cls == OC_MAXLOC) {
        /* Few distinct values, so ties (broken by the lower index) are common. */
        const uint64_t v = c == 0 ? h % 5 : (h >> 8) % (uint64_t)(2 * P);
        if (kind_float(k))
            store_float(k, (long double)v, out);
        else
            store_int(k, v, out);
        return;
    }
    if (k == K_BOOL || k == K_FLOG) {
        int v = (int)(h & 1);
        if (cls == OC_LAND)
            v = h % (uint64_t)(2 * P) != 0;
        else if (cls == OC_LOR)
            v = h % (uint64_t)(2 * P) == 0;
        store_int(k, (uint64_t)v, out);
        return;
    }
    if (kind_float(k)) {
        if (cls == OC_SUM || cls == OC_PROD)
            store_float(k, 0.5L + u, out); /* positive: no cancellation, well-conditioned */
        else
            store_float(k, -1000.0L + 2000.0L * u, out);
        return;
    }
    const int bits = 8 * kind_bytes[k];
    const uint64_t mask = bits == 64 ? ~0ull : (1ull << bits) - 1;
    uint64_t v = h;
    switch (cls) {
    case OC_SUM:
        if (kind_signed(k)) {
            const uint64_t m = (mask >> 1) / (uint64_t)P; /* |sum| <= P*m <= max */
            v = (uint64_t)((int64_t)(h % (2 * m + 1)) - (int64_t)m);
        } else {
            v = h % (mask / (uint64_t)P + 1);
        }
        break;
    case OC_PROD: {
        /* +-1 everywhere but one rank per element, which gives 1, 2 or 3. */
        int64_t x = kind_signed(k) && (h & 1) ? -1 : 1;
        if ((e + c) % P == rank)
            x *= 1 + (int64_t)((h >> 8) % 3);
        v = (uint64_t)x;
        break;
    }
    case OC_LAND:
        v = h % (uint64_t)(2 * P) == 0 ? 0 : ((h >> 8) & mask) | 1;
        break;
    case OC_LOR:
        v = h % (uint64_t)(2 * P) == 0 ? ((h >> 8) & mask) | 1 : 0;
        break;
    case OC_LXOR:
        v = (h & 1) ? ((h >> 8) & mask) | 1 : 0;
        break;
    case OC_BAND:
        v = (h & 1) ? ~(1ull << ((h >> 8) % bits)) : ~0ull;
        break;
    case OC_BOR:
        v = (h & 1) ? 1ull << ((h >> 8) % bits) : 0;
        break;
    default:
        break;
    }
    store_int(k, v, out);
}

/* `n` packed elements of `t`, elements first..first+n-1 of rank `rank`'s input. */
static unsigned char* gen_stream(
    const struct ttype* t, int cls, uint64_t salt, int rank, int P, MPI_Aint first, MPI_Aint n)
{
    unsigned char* s = xmalloc((size_t)(n * t->size));
    unsigned char* p = s;
    const uint64_t hr = mix64(salt ^ mix64((uint64_t)rank + 0x51));
    for (MPI_Aint e = first; e < first + n; ++e)
        for (int c = 0; c < t->ncomp; ++c) {
            gen_one(t->kind[c], cls, mix64(hr ^ ((uint64_t)e * 8 + (uint64_t)c)), rank, P, e, c, p);
            p += kind_bytes[t->kind[c]];
        }
    return s;
}

/* ---- comparison -------------------------------------------------------- */
static void show_value(int k, const unsigned char* p, char* out, size_t n)
{
    if (kind_float(k)) {
        snprintf(out, n, "%.21Lg", load_float(k, p));
        return;
    }
    const uint64_t v = load_uint(k, p);
    if (kind_signed(k)) {
        const int sh = 64 - 8 * kind_bytes[k];
        snprintf(out, n, "%lld", (long long)((int64_t)(v << sh) >> sh));
    } else {
        snprintf(out, n, "%llu (0x%llx)", (unsigned long long)v, (unsigned long long)v);
    }
}

/* Compares n packed elements of `got` (ours) with `want` (MPICH's). Sums
 * and products of floating point values may differ by the rounding of
 * another order: each of the P-1 operations rounds by at most eps/2
 * relative, and the inputs are positive, so 4*P*eps of the result bounds
 * the difference with margin. Returns 0 or writes the first difference. */
static int compare(const struct ttype* t, int cls, int P, const unsigned char* got, const unsigned char* want,
    MPI_Aint n, const char* what, const char* wname, char* detail, size_t dn)
{
    const int tolerant = cls == OC_SUM || cls == OC_PROD;
    MPI_Aint at = 0;
    for (MPI_Aint e = 0; e < n; ++e) {
        for (int c = 0; c < t->ncomp; ++c) {
            const int k = t->kind[c], kb = kind_bytes[k];
            const unsigned char *g = got + at, *w = want + at;
            at += kb;
            long double tol = 0, diff = 0;
            int bad;
            if (!kind_float(k) || cls == OC_DATA) {
                bad = memcmp(g, w, k == K_LD && cls != OC_DATA ? 10 : (size_t)kb) != 0;
            } else {
                const long double x = load_float(k, g), y = load_float(k, w);
                diff = fabsl(x - y);
                if (tolerant) {
                    long double mag = fabsl(y);
                    if (t->complex && cls == OC_PROD) {
                        /* A complex product's parts are accurate relative to its modulus. */
                        const int re = c % 2 == 0;
                        const long double other = load_float(k, re ? w + kb : w - kb);
                        mag = sqrtl(y * y + other * other) * 2;
                    }
                    tol = 4.0L * P * kind_eps(k) * mag;
                }
                bad = !(diff <= tol);
            }
            if (bad) {
                char gs[64], ws[64];
                show_value(k, g, gs, sizeof gs);
                show_value(k, w, ws, sizeof ws);
                if (tolerant && kind_float(k))
                    snprintf(detail, dn,
                        "%s element %ld component %d: got %s, %s %s (difference %.3Lg > tolerance %.3Lg)", what,
                        (long)e, c, gs, wname, ws, diff, tol);
                else
                    snprintf(detail, dn, "%s element %ld component %d: got %s, %s %s", what, (long)e, c, gs, wname, ws);
                return 1;
            }
        }
    }
    return 0;
}

/* ---- cases ------------------------------------------------------------- */
enum coll {
    C_BCAST,
    C_REDUCE,
    C_ALLREDUCE,
    C_ALLGATHER,
    C_ALLGATHERV,
    C_ALLTOALL,
    C_ALLTOALLV,
    C_BARRIER,
    C_RSB,
    /* Nonblocking forms: the cases of their blocking form, started with
     * MPI_I* and completed in one of several ways (see complete()). */
    C_IBCAST,
    C_IREDUCE,
    C_IALLREDUCE,
    C_IBARRIER,
    NCOLL
};
static const char* coll_name[NCOLL] = {"bcast", "reduce", "allreduce", "allgather", "allgatherv", "alltoall",
    "alltoallv", "barrier", "reduce_scatter_block", "ibcast", "ireduce", "iallreduce", "ibarrier"};
static const char* coll_env[NCOLL] = {"HASHI_COLL_BCAST", "HASHI_COLL_REDUCE", "HASHI_COLL_ALLREDUCE",
    "HASHI_COLL_ALLGATHER", "HASHI_COLL_ALLGATHERV", "HASHI_COLL_ALLTOALL", "HASHI_COLL_ALLTOALLV",
    "HASHI_COLL_BARRIER", "HASHI_COLL_REDUCE_SCATTER_BLOCK", "HASHI_COLL_IBCAST", "HASHI_COLL_IREDUCE",
    "HASHI_COLL_IALLREDUCE", "HASHI_COLL_IBARRIER"};
/* The blocking form of a collective (its own for the blocking ones). */
static int base(int coll)
{
    switch (coll) {
    case C_IBCAST:
        return C_BCAST;
    case C_IREDUCE:
        return C_REDUCE;
    case C_IALLREDUCE:
        return C_ALLREDUCE;
    case C_IBARRIER:
        return C_BARRIER;
    default:
        return coll;
    }
}

struct kase {
    int coll, type, op; /* op -1: data movement */
    int count, root, inplace, variant;
};

/* Options */
static struct {
    int colls[NCOLL];
    char comms[256];
    int quick, trace;
    int f_type, f_op, f_count, f_root, f_inplace, f_variant; /* -1: any */
    uint64_t seed;
    int large;
    const char* expect;
    int max_report;
} opt;
static char opt_type[64], opt_op[64];

struct caselist {
    struct kase* v;
    int n, cap;
};

static void push(struct caselist* l, struct kase k)
{
    if ((opt.f_type >= 0 && k.type != opt.f_type) || (opt.f_op >= 0 && k.op != opt.f_op) ||
        (opt.f_count >= 0 && k.count != opt.f_count) || (opt.f_root >= 0 && k.root != opt.f_root) ||
        (opt.f_inplace >= 0 && k.inplace != opt.f_inplace) || (opt.f_variant >= 0 && k.variant != opt.f_variant))
        return;
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 256;
        struct kase* v = realloc(l->v, (size_t)l->cap * sizeof *v);
        if (!v) {
            fprintf(stderr, "collcheck: out of memory for the case list\n");
            PMPI_Abort(MPI_COMM_WORLD, 3);
        }
        l->v = v;
    }
    l->v[l->n++] = k;
}

static int is_reduction(int coll)
{
    coll = base(coll);
    return coll == C_REDUCE || coll == C_ALLREDUCE || coll == C_RSB;
}
static int has_root(int coll)
{
    coll = base(coll);
    return coll == C_BCAST || coll == C_REDUCE;
}
static int per_rank(int coll)
{
    return coll >= C_ALLGATHER && coll <= C_ALLTOALLV;
}

static const char* algorithm(int coll);
/* A Hashi algorithm is forced for this collective (not auto, not MPICH's). */
static int forced_hashi(int coll)
{
    const char* a = algorithm(coll);
    return strcmp(a, "auto") != 0 && strncmp(a, "mpich", 5) != 0;
}

/* The case matrix of one collective on a communicator of P ranks.
 * Every (type, op) pair MPI allows (every type for data movement) runs
 * once, the count (1, 7 or 31) and in place rotating over the pairs. The
 * core pairs run counts 0, 1, 7, 1021 (and a large one for int, double and
 * a vector type), plain and in place, and variants (mixed send and receive
 * types, other count patterns). Roots rotate over the cases, and a root
 * sweep runs every root.
 * --quick: only the quick types, and counts 0, 1, 31, 1021 for the core. */
static void enumerate(int coll, int P, struct caselist* l)
{
    if (base(coll) != coll) {
        /* The same cases as the blocking form, started nonblocking. */
        const int from = l->n;
        enumerate(base(coll), P, l);
        for (int i = from; i < l->n; ++i)
            l->v[i].coll = coll;
        return;
    }
    static const int full_core[] = {0, 1, 7, 1021, -1};
    static const int quick_core[] = {0, 1, 31, 1021};
    static const int rotating[] = {7, 31, 1};
    int seq = 0, pair = 0;
    if (coll == C_BARRIER) {
        /* count = which rank is late; variant 1: back-to-back barriers. */
        for (int late = 0; late < P; ++late)
            if (!opt.quick || late == 0 || late == P / 2 || late == P - 1)
                push(l, (struct kase) {coll, -1, -1, late, -1, 0, 0});
        push(l, (struct kase) {coll, -1, -1, 0, -1, 0, 1});
        return;
    }
    const int red = is_reduction(coll);
    for (int ti = 0; ti < ntypes; ++ti) {
        const struct ttype* t = &types[ti];
        if ((opt.quick && !t->quick) || (no_reference(t) && !forced_hashi(coll)))
            continue;
        for (int oi = red ? 0 : -1; oi < (red ? nops : 0); ++oi) {
            if (oi >= 0 && !allowed[ti][oi])
                continue;
            const int core = t->core_op && (!red || strcmp(ops[oi].name, t->core_op) == 0);
            const int ncounts = !core ? 1 : 4 + !opt.quick;
            for (int ci = 0; ci < ncounts; ++ci) {
                int count = !core ? rotating[pair % 3] : opt.quick ? quick_core[ci] : full_core[ci];
                if (count < 0) {
                    /* The large count costs most: a few types get it. */
                    if (!(t->dt == MPI_INT || t->dt == MPI_DOUBLE || strcmp(t->name, "vector(2,1,3,int)") == 0))
                        continue;
                    count = per_rank(coll) ? opt.large / P / (coll == C_ALLTOALLV ? 2 : 1) : opt.large;
                    if (coll == C_RSB)
                        count = opt.large / P; /* P * recvcount elements per rank */
                    if (count < 1)
                        count = 1;
                }
                if (coll == C_RSB && count == 1021 && P > 4)
                    count = 257;
                int ip_lo = 0, ip_hi = coll == C_BCAST ? 0 : 1;
                if (!core || opt.quick)
                    ip_lo = ip_hi = coll == C_BCAST ? 0 : (pair / 3 + ci) % 2;
                int nvar = 1;
                if (core && (coll == C_ALLGATHER || coll == C_ALLTOALL) && t->basic != MPI_DATATYPE_NULL && count == 7)
                    nvar = 2;
                if (core && (coll == C_ALLGATHERV || coll == C_ALLTOALLV) && (count == 7 || count == 1021))
                    nvar = 2;
                for (int ip = ip_lo; ip <= ip_hi; ++ip)
                    for (int var = 0; var < nvar; ++var) {
                        int root = has_root(coll) ? seq++ % P : -1;
                        push(l, (struct kase) {coll, ti, oi, count, root, ip, var});
                    }
            }
            ++pair;
        }
    }
    if (!has_root(coll))
        return;
    /* Root sweep: every root, a few counts, plain and in place. */
    static const int sweep_counts[] = {0, 1, 31, 1021};
    for (int ti = 0; ti < ntypes; ++ti) {
        const struct ttype* t = &types[ti];
        const int pick = t->dt == MPI_INT || (!opt.quick && strcmp(t->name, "vector(2,1,3,int)") == 0) ||
            (!opt.quick && coll == C_REDUCE && t->dt == MPI_2INT);
        if (!pick)
            continue;
        int oi = -1;
        if (coll == C_REDUCE) {
            for (oi = 0; oi < nops && strcmp(ops[oi].name, t->core_op) != 0; ++oi)
                ;
            if (oi == nops || !allowed[ti][oi])
                continue;
        }
        for (int root = 0; root < P; ++root)
            for (int ci = 0; ci < 4; ++ci) {
                if (opt.quick && (ci == 0 || ci == 2))
                    continue;
                const int ip = coll == C_REDUCE ? (root + ci) % 2 : 0;
                push(l, (struct kase) {coll, ti, oi, sweep_counts[ci], root, ip, 2});
            }
    }
}

/* ---- communicators ----------------------------------------------------- */
struct ctx {
    MPI_Comm comm;
    int rank, size, wrank;
    char name[48]; /* kind and color */
    char kind[16];
    char members[160]; /* world ranks, in communicator order */
    int* world_of; /* communicator rank -> world rank */
};

static int world_rank, world_size;
static int* cluster_of_world;

/* ---- running one case -------------------------------------------------- */
struct outcome {
    int failed;
    char detail[600];
    int noted; /* MPICH's own result was wrong: reported, not counted */
    char note[600];
};

static void failf(struct outcome* o, const char* fmt, ...)
{
    if (o->failed)
        return;
    o->failed = 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(o->detail, sizeof o->detail, fmt, ap);
    va_end(ap);
}

static void check_rc(struct outcome* o, int ours, int ref)
{
    if (ours == MPI_SUCCESS && ref == MPI_SUCCESS)
        return;
    char s1[MPI_MAX_ERROR_STRING] = "MPI_SUCCESS", s2[MPI_MAX_ERROR_STRING] = "MPI_SUCCESS";
    int n;
    if (ours != MPI_SUCCESS)
        PMPI_Error_string(ours, s1, &n);
    if (ref != MPI_SUCCESS)
        PMPI_Error_string(ref, s2, &n);
    failf(o, "returned \"%.200s\", MPICH returned \"%.200s\"", s1, s2);
}

/* Bytes outside the data must keep their sentinel. Where MPICH's own call
 * wrote the same byte of its copy, that is MPICH's doing: noted only. */
static void check_stray(struct outcome* o, const struct tbuf* b, const struct tbuf* ref, const char* what)
{
    const long off = tb_stray_write(b);
    if (off == LONG_MIN)
        return;
    if (ref && tb_stray_write(ref) == off) {
        if (!o->noted) {
            o->noted = 1;
            snprintf(
                o->note, sizeof o->note, "MPICH's own call wrote byte %ld of the %s too, outside its data", off, what);
        }
        return;
    }
    failf(o, "wrote byte %ld of the %s, outside its data (a hole of the type or past its end)", off, what);
}

/* Data movement: the result is known exactly (every rank's input can be
 * generated anywhere), so ours is compared with it; MPICH's own result is
 * compared too, and where MPICH is wrong that is noted, not counted
 * against us (MPICH 4.0.2's allgatherv on one rank ignores displs[0]). */
static void check_moved(struct outcome* o, const struct ttype* t, const struct tbuf* ours, const struct tbuf* ref,
    const struct block* bl, int nb, const unsigned char* expected, const char* what)
{
    const MPI_Aint n = blocks_elems(bl, nb);
    unsigned char* a = xmalloc((size_t)(n * t->size));
    unsigned char* b = xmalloc((size_t)(n * t->size));
    char d[500], dr[500];
    tb_pack(ours, bl, nb, a);
    const int ours_bad = compare(t, OC_DATA, 1, a, expected, n, what, "expected", d, sizeof d);
    if (!ref) {
        if (ours_bad)
            failf(o, "%s (no reference call: MPICH mishandles this type)", d);
        free(a), free(b);
        return;
    }
    tb_pack(ref, bl, nb, b);
    const int ref_bad = compare(t, OC_DATA, 1, b, expected, n, what, "expected", dr, sizeof dr);
    const int same = !compare(t, OC_DATA, 1, a, b, n, what, "MPICH", dr, sizeof dr);
    if (ours_bad && !same)
        failf(o, "%s (MPICH's own result is %s)", d, ref_bad ? "wrong too, differently" : "right");
    if (ref_bad && !o->noted) {
        o->noted = 1;
        snprintf(o->note, sizeof o->note, "MPICH's own result is wrong%s: %s",
            same ? " and ours is the same (passed to MPICH?)" : "", d);
    }
    free(a);
    free(b);
}

/* The send buffer must come back as it went in. */
static void check_unchanged(struct outcome* o, const struct ttype* t, const struct tbuf* b, const struct tbuf* ref,
    const struct block* bl, int nb, const unsigned char* stream)
{
    /* In elements of t: the buffer's own type may be t's basic type. */
    const MPI_Aint n = blocks_elems(bl, nb) * b->size / t->size;
    unsigned char* a = xmalloc((size_t)(n * t->size));
    tb_pack(b, bl, nb, a);
    char d[500];
    if (compare(t, OC_DATA, 1, a, stream, n, "send buffer changed:", "before the call", d, sizeof d))
        failf(o, "%s", d);
    free(a);
    check_stray(o, b, ref, "send buffer");
}

static uint64_t case_salt(const struct kase* k)
{
    uint64_t h = mix64(opt.seed);
    const int f[7] = {k->coll, k->type, k->op, k->count, k->root, k->inplace, k->variant};
    for (int i = 0; i < 7; ++i)
        h = mix64(h ^ (uint64_t)(uint32_t)f[i]);
    return h;
}

#define GARBAGE 0x6a09e667f3bcc908ull

/* Completes a nonblocking collective's request (rc: what starting it
 * returned). In a third of the cases ranks pair up (0-1, 2-3, ...) for a
 * blocking MPI_Sendrecv: the even one calls it while the collective is in
 * flight, the odd one only after completing the collective, so the even
 * one must keep passing the collective's data on while it waits in the
 * point-to-point call (MPI's progress rule). Otherwise each rank completes
 * it its own way: MPI_Wait, MPI_Test until done, MPI_Waitall alongside a
 * null request, or MPI_Testany. */
static int pair_exchange(const struct ctx* x)
{
    const int partner = x->rank ^ 1;
    if (partner >= x->size)
        return MPI_SUCCESS;
    int out = x->rank, in = -1;
    int rc = MPI_Sendrecv(&out, 1, MPI_INT, partner, 77, &in, 1, MPI_INT, partner, 77, x->comm, MPI_STATUS_IGNORE);
    return rc == MPI_SUCCESS && in != partner ? MPI_ERR_OTHER : rc;
}

static int complete(const struct kase* k, const struct ctx* x, int rc, MPI_Request* req)
{
    if (rc != MPI_SUCCESS)
        return rc;
    const uint64_t salt = case_salt(k);
    const int paired = salt % 3 == 0;
    if (paired && x->rank % 2 == 0 && (rc = pair_exchange(x)) != MPI_SUCCESS)
        return rc;
    int flag = 0, index = 0;
    switch (paired ? 0 : (int)(((salt >> 8) + (uint64_t)x->rank) % 4)) {
    case 0:
        rc = MPI_Wait(req, MPI_STATUS_IGNORE);
        break;
    case 1:
        while (rc == MPI_SUCCESS && !flag)
            rc = MPI_Test(req, &flag, MPI_STATUS_IGNORE);
        break;
    case 2: {
        MPI_Request two[2] = {*req, MPI_REQUEST_NULL};
        MPI_Status st[2];
        rc = MPI_Waitall(2, two, st);
        *req = two[0];
        break;
    }
    default:
        while (rc == MPI_SUCCESS && !flag)
            rc = MPI_Testany(1, req, &index, &flag, MPI_STATUS_IGNORE);
    }
    if (rc == MPI_SUCCESS && *req != MPI_REQUEST_NULL)
        return MPI_ERR_REQUEST; /* completion must free the request */
    if (rc == MPI_SUCCESS && paired && x->rank % 2 == 1)
        rc = pair_exchange(x);
    return rc;
}

static void run_bcast(const struct ctx* x, const struct kase* k, struct outcome* o)
{
    const struct ttype* t = &types[k->type];
    const uint64_t salt = case_salt(k);
    const struct block bl = {0, k->count};
    struct tbuf r, m;
    tb_init(&r, t->dt, &bl, 1);
    tb_init(&m, t->dt, &bl, 1);
    unsigned char* s =
        gen_stream(t, OC_DATA, x->rank == k->root ? salt : salt ^ GARBAGE, x->rank, x->size, 0, k->count);
    tb_fill(&r, &bl, 1, s);
    tb_fill(&m, &bl, 1, s);
    void* rb = k->count ? r.buf : NULL;
    void* mb = k->count ? m.buf : NULL;
    const int rc_ref = no_reference(t) ? MPI_SUCCESS : PMPI_Bcast(rb, k->count, t->dt, k->root, x->comm);
    int rc;
    if (k->coll == C_IBCAST) {
        MPI_Request req = MPI_REQUEST_NULL;
        rc = complete(k, x, MPI_Ibcast(mb, k->count, t->dt, k->root, x->comm, &req), &req);
    } else {
        rc = MPI_Bcast(mb, k->count, t->dt, k->root, x->comm);
    }
    check_rc(o, rc, rc_ref);
    unsigned char* want = x->rank == k->root ? s : gen_stream(t, OC_DATA, salt, k->root, x->size, 0, k->count);
    check_moved(o, t, &m, no_reference(t) ? NULL : &r, &bl, 1, want, "buffer");
    check_stray(o, &m, &r, "buffer");
    if (want != s)
        free(want);
    free(s);
    tb_free(&r);
    tb_free(&m);
}

/* The exact reduction of elements first..first+n-1 over all P ranks'
 * inputs, in MPI's order (x0 op x1 op ... op xP-1), computed locally. */
static unsigned char* reduced(
    const struct ttype* t, const struct top* op, uint64_t salt, int P, MPI_Aint first, MPI_Aint n)
{
    const struct block bl = {0, (int)n};
    struct tbuf acc, x;
    tb_init(&acc, t->dt, &bl, 1);
    tb_init(&x, t->dt, &bl, 1);
    unsigned char* s = gen_stream(t, op->cls, salt, P - 1, P, first, n);
    tb_fill(&acc, &bl, 1, s);
    free(s);
    for (int j = P - 2; j >= 0; --j) {
        s = gen_stream(t, op->cls, salt, j, P, first, n);
        tb_fill(&x, &bl, 1, s);
        free(s);
        PMPI_Reduce_local(x.buf, acc.buf, (int)n, t->dt, op->op);
    }
    s = xmalloc((size_t)(n * t->size));
    tb_pack(&acc, &bl, 1, s);
    tb_free(&acc);
    tb_free(&x);
    return s;
}

/* A reduction's result: ours must equal the exact result (within the
 * rounding of another order for floating point), or at least MPICH's own;
 * where MPICH's own result is wrong that is noted, not counted. */
static void check_reduced(struct outcome* o, const struct ttype* t, int cls, int P, const struct tbuf* ours,
    const struct tbuf* ref, const struct block* bl, const unsigned char* want)
{
    const MPI_Aint n = blocks_elems(bl, 1);
    unsigned char* a = xmalloc((size_t)(n * t->size));
    unsigned char* b = xmalloc((size_t)(n * t->size));
    char d[500], dr[500], ds[500];
    tb_pack(ours, bl, 1, a);
    const int ours_bad = compare(t, cls, P, a, want, n, "result", "exact", d, sizeof d);
    if (!ref) {
        if (ours_bad)
            failf(o, "%s (no reference call: MPICH mishandles this type)", d);
        free(a), free(b);
        return;
    }
    tb_pack(ref, bl, 1, b);
    const int ref_bad = compare(t, cls, P, b, want, n, "result", "exact", dr, sizeof dr);
    const int same = !compare(t, cls, P, a, b, n, "result", "MPICH", ds, sizeof ds);
    if (ours_bad && !same)
        failf(o, "%s (MPICH's own result is %s)", ref_bad ? ds : d, ref_bad ? "wrong too, differently" : "right");
    if (ref_bad && !o->noted) {
        o->noted = 1;
        snprintf(o->note, sizeof o->note, "MPICH's own result is wrong%s: %s",
            same ? " and ours is the same (passed to MPICH?)" : "", dr);
    }
    free(a);
    free(b);
}

/* reduce, allreduce and reduce_scatter_block share inputs and checks. */
static void run_reduction(const struct ctx* x, const struct kase* k, struct outcome* o)
{
    const struct ttype* t = &types[k->type];
    const struct top* op = &ops[k->op];
    const uint64_t salt = case_salt(k);
    const int P = x->size, n = k->count;
    const int coll = base(k->coll);
    const int total = coll == C_RSB ? n * P : n; /* input elements */
    const int root_here = coll != C_REDUCE || x->rank == k->root;
    const int inplace = k->inplace && root_here;
    const struct block in = {0, total}, res = {0, n};
    const struct block rlay = inplace ? in : res; /* layout of the receive buffer */
    unsigned char* s = gen_stream(t, op->cls, salt, x->rank, P, 0, total);
    unsigned char* garbage = gen_stream(t, OC_DATA, salt ^ GARBAGE, x->rank, P, 0, total);
    struct tbuf rs, rr, ms, mr;
    tb_init(&rs, t->dt, &in, 1);
    tb_init(&ms, t->dt, &in, 1);
    tb_init(&rr, t->dt, &rlay, 1);
    tb_init(&mr, t->dt, &rlay, 1);
    tb_fill(&rs, &in, 1, s);
    tb_fill(&ms, &in, 1, s);
    tb_fill(&rr, &rlay, 1, inplace ? s : garbage);
    tb_fill(&mr, &rlay, 1, inplace ? s : garbage);
    /* Count 0: NULL buffers, as programs pass them. Non-roots of reduce
     * pass NULL receive buffers: MPI lets them, so no algorithm may use one. */
    const void* rsb = inplace ? MPI_IN_PLACE : total ? (void*)rs.buf : NULL;
    const void* msb = inplace ? MPI_IN_PLACE : total ? (void*)ms.buf : NULL;
    void* rrb = root_here && n ? rr.buf : NULL;
    void* mrb = root_here && n ? mr.buf : NULL;
    int rc_ref = MPI_SUCCESS, rc;
    foreign_type_seen = 0;
    if (no_reference(t)) {
        rc_ref = MPI_SUCCESS;
    } else if (coll == C_REDUCE) {
        /* MPICH 4.0.2's own MPI_Reduce is wrong or crashes when the root
         * is not its node's first rank on nodes of different sizes
         * (pmodels/mpich#6893, #6540); its allreduce gives the same result
         * at the root. */
        rc_ref = PMPI_Allreduce(total ? (void*)rs.buf : NULL, n ? rr.buf : NULL, n, t->dt, op->op, x->comm);
    } else if (coll == C_ALLREDUCE) {
        rc_ref = PMPI_Allreduce(rsb, rrb, n, t->dt, op->op, x->comm);
    } else {
        rc_ref = PMPI_Reduce_scatter_block(rsb, rrb, n, t->dt, op->op, x->comm);
    }
    MPI_Request req = MPI_REQUEST_NULL;
    if (k->coll == C_IREDUCE)
        rc = complete(k, x, MPI_Ireduce(msb, mrb, n, t->dt, op->op, k->root, x->comm, &req), &req);
    else if (k->coll == C_IALLREDUCE)
        rc = complete(k, x, MPI_Iallreduce(msb, mrb, n, t->dt, op->op, x->comm, &req), &req);
    else if (k->coll == C_REDUCE)
        rc = MPI_Reduce(msb, mrb, n, t->dt, op->op, k->root, x->comm);
    else if (k->coll == C_ALLREDUCE)
        rc = MPI_Allreduce(msb, mrb, n, t->dt, op->op, x->comm);
    else
        rc = MPI_Reduce_scatter_block(msb, mrb, n, t->dt, op->op, x->comm);
    check_rc(o, rc, rc_ref);
    if (foreign_type_seen)
        failf(o, "the user op was called with a datatype the program never passed");
    if (root_here && n > 0) {
        const MPI_Aint first = coll == C_RSB ? (MPI_Aint)x->rank * n : 0;
        unsigned char* want = reduced(t, op, salt, P, first, n);
        check_reduced(o, t, op->cls, P, &mr, no_reference(t) ? NULL : &rr, &res, want);
        free(want);
    }
    if (!inplace)
        check_unchanged(o, t, &ms, &rs, &in, 1, s);
    check_stray(o, &mr, &rr, "receive buffer");
    free(s);
    free(garbage);
    tb_free(&rs), tb_free(&rr), tb_free(&ms), tb_free(&mr);
}

/* Counts of the v-collectives: zeros, and blocks of different sizes. */
static int vcount(int a, int b, int count, int variant, int symmetric)
{
    const int m = symmetric ? (a + b + variant) % 4 : (3 * a + 5 * b + variant) % 4;
    return m * count / 2;
}

/* Displacements in reverse rank order with a one-element gap between blocks. */
static void reverse_displs(const int* counts, int P, MPI_Aint* displs)
{
    MPI_Aint at = 1;
    for (int j = P - 1; j >= 0; --j) {
        displs[j] = at;
        at += counts[j] + 1;
    }
}

/* What rank `me` receives in a gather-like case: from each source j, the
 * block j generated for it. */
static unsigned char* expected_recv(
    const struct ttype* t, const struct kase* k, uint64_t salt, int me, int P, MPI_Aint total)
{
    unsigned char* out = xmalloc((size_t)(total * t->size));
    MPI_Aint at = 0;
    for (int j = 0; j < P; ++j) {
        MPI_Aint first = 0, count = k->count;
        if (k->coll == C_ALLGATHERV) {
            count = vcount(j, 0, k->count, k->variant, 0);
        } else if (k->coll == C_ALLTOALL) {
            first = (MPI_Aint)me * k->count;
        } else if (k->coll == C_ALLTOALLV) {
            for (int d = 0; d < me; ++d)
                first += vcount(j, d, k->count, k->variant, k->inplace);
            count = vcount(j, me, k->count, k->variant, k->inplace);
        }
        if (count > 0) {
            unsigned char* part = gen_stream(t, OC_DATA, salt, j, P, first, count);
            memcpy(out + at * t->size, part, (size_t)(count * t->size));
            free(part);
            at += count;
        }
    }
    return out;
}

static void run_gather_like(const struct ctx* x, const struct kase* k, struct outcome* o)
{
    const struct ttype* t = &types[k->type];
    const uint64_t salt = case_salt(k);
    const int P = x->size, me = x->rank, n = k->count;
    const int a2a = k->coll == C_ALLTOALL || k->coll == C_ALLTOALLV;
    const int vee = k->coll == C_ALLGATHERV || k->coll == C_ALLTOALLV;
    /* Layouts: send blocks (to each destination, or one), receive blocks (from each source). */
    struct block* sb = xmalloc(sizeof(struct block) * P);
    struct block* rb = xmalloc(sizeof(struct block) * P);
    int* scounts = xmalloc(sizeof(int) * P);
    int* rcounts = xmalloc(sizeof(int) * P);
    int* sdis = xmalloc(sizeof(int) * P);
    int* rdis = xmalloc(sizeof(int) * P);
    MPI_Aint* tmp = xmalloc(sizeof(MPI_Aint) * P);
    int nsb = a2a ? P : 1;
    for (int j = 0; j < P; ++j) {
        if (k->coll == C_ALLTOALLV) {
            scounts[j] = vcount(me, j, n, k->variant, k->inplace);
            rcounts[j] = vcount(j, me, n, k->variant, k->inplace);
        } else if (k->coll == C_ALLGATHERV) {
            scounts[j] = vcount(me, 0, n, k->variant, 0);
            rcounts[j] = vcount(j, 0, n, k->variant, 0);
        } else {
            scounts[j] = rcounts[j] = n;
        }
    }
    if (vee) {
        reverse_displs(rcounts, P, tmp);
        for (int j = 0; j < P; ++j)
            rdis[j] = (int)tmp[j];
        reverse_displs(scounts, P, tmp);
        for (int j = 0; j < P; ++j)
            sdis[j] = (int)tmp[j];
    } else {
        for (int j = 0; j < P; ++j)
            sdis[j] = rdis[j] = j * n;
    }
    for (int j = 0; j < P; ++j) {
        rb[j] = (struct block) {rdis[j], rcounts[j]};
        sb[j] = (struct block) {a2a ? sdis[j] : 0, scounts[j]};
    }
    if (!a2a)
        sb[0] = (struct block) {0, scounts[0]};
    /* Mixed: send with the basic type (nbasic times the count), receive
     * with the derived type; the type signatures match. */
    const int mixed = k->variant == 1 && !vee;
    MPI_Datatype sdt = mixed ? t->basic : t->dt;
    const int sfac = mixed ? t->nbasic : 1;
    struct block* sbm = xmalloc(sizeof(struct block) * P);
    for (int j = 0; j < nsb; ++j)
        sbm[j] = (struct block) {sb[j].disp * sfac, sb[j].count * sfac};
    const MPI_Aint sn = blocks_elems(sb, nsb), rn = blocks_elems(rb, P);
    unsigned char* s = gen_stream(t, OC_DATA, salt, me, P, 0, sn);
    unsigned char* garbage = gen_stream(t, OC_DATA, salt ^ GARBAGE, me, P, 0, rn);
    struct tbuf rs, ms, rr, mr;
    tb_init(&rs, sdt, sbm, nsb);
    tb_init(&ms, sdt, sbm, nsb);
    tb_init(&rr, t->dt, rb, P);
    tb_init(&mr, t->dt, rb, P);
    tb_fill(&rs, sbm, nsb, s);
    tb_fill(&ms, sbm, nsb, s);
    tb_fill(&rr, rb, P, garbage);
    tb_fill(&mr, rb, P, garbage);
    if (k->inplace) {
        /* The data to send sits where it is received (a2a: in the receive
         * layout, which the symmetric counts make equal to the send one). */
        if (a2a) {
            tb_fill(&rr, rb, P, s);
            tb_fill(&mr, rb, P, s);
        } else {
            tb_fill(&rr, &rb[me], 1, s);
            tb_fill(&mr, &rb[me], 1, s);
        }
    }
    const int any_recv = rn > 0, any_send = sn > 0;
    const void* rsp = k->inplace ? MPI_IN_PLACE : any_send || a2a ? (void*)rs.buf : NULL;
    const void* msp = k->inplace ? MPI_IN_PLACE : any_send || a2a ? (void*)ms.buf : NULL;
    void* rrp = any_recv || n ? rr.buf : NULL;
    void* mrp = any_recv || n ? mr.buf : NULL;
    if (n == 0)
        rsp = k->inplace ? MPI_IN_PLACE : NULL, msp = k->inplace ? MPI_IN_PLACE : NULL, rrp = mrp = NULL;
    int rc_ref = MPI_SUCCESS, rc = MPI_SUCCESS;
    switch (k->coll) {
    case C_ALLGATHER:
        rc_ref = no_reference(t) ? MPI_SUCCESS : PMPI_Allgather(rsp, n * sfac, sdt, rrp, n, t->dt, x->comm);
        rc = MPI_Allgather(msp, n * sfac, sdt, mrp, n, t->dt, x->comm);
        break;
    case C_ALLGATHERV:
        rc_ref =
            no_reference(t) ? MPI_SUCCESS : PMPI_Allgatherv(rsp, scounts[0], sdt, rrp, rcounts, rdis, t->dt, x->comm);
        rc = MPI_Allgatherv(msp, scounts[0], sdt, mrp, rcounts, rdis, t->dt, x->comm);
        break;
    case C_ALLTOALL:
        rc_ref = no_reference(t) ? MPI_SUCCESS : PMPI_Alltoall(rsp, n * sfac, sdt, rrp, n, t->dt, x->comm);
        rc = MPI_Alltoall(msp, n * sfac, sdt, mrp, n, t->dt, x->comm);
        break;
    case C_ALLTOALLV:
        rc_ref =
            no_reference(t) ? MPI_SUCCESS : PMPI_Alltoallv(rsp, scounts, sdis, sdt, rrp, rcounts, rdis, t->dt, x->comm);
        rc = MPI_Alltoallv(msp, scounts, sdis, sdt, mrp, rcounts, rdis, t->dt, x->comm);
        break;
    }
    check_rc(o, rc, rc_ref);
    unsigned char* want = expected_recv(t, k, salt, me, P, rn);
    check_moved(o, t, &mr, no_reference(t) ? NULL : &rr, rb, P, want, "receive buffer");
    free(want);
    if (!k->inplace)
        check_unchanged(o, t, &ms, &rs, sbm, nsb, s);
    check_stray(o, &mr, &rr, "receive buffer");
    free(s), free(garbage), free(sb), free(rb), free(sbm), free(scounts), free(rcounts), free(sdis), free(rdis),
        free(tmp);
    tb_free(&rs), tb_free(&ms), tb_free(&rr), tb_free(&mr);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts); /* one clock for every process of the machine */
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* No rank may leave the barrier before the last one entered it. One rank
 * comes late (case count = its rank); variant 1 runs 20 barriers back to
 * back, which must match up without errors. */
static void run_barrier(const struct ctx* x, const struct kase* k, struct outcome* o)
{
    const int nb = k->coll == C_IBARRIER;
    if (k->variant == 1 && nb) {
        /* 20 barriers in flight at once, completed together. */
        MPI_Request req[20];
        for (int i = 0; i < 20; ++i)
            check_rc(o, MPI_Ibarrier(x->comm, &req[i]), MPI_SUCCESS);
        MPI_Status st[20];
        check_rc(o, MPI_Waitall(20, req, st), MPI_SUCCESS);
        return;
    }
    if (k->variant == 1) {
        for (int i = 0; i < 20; ++i) {
            const int rc = MPI_Barrier(x->comm);
            check_rc(o, rc, MPI_SUCCESS);
        }
        return;
    }
    PMPI_Barrier(x->comm);
    if (x->rank == k->count) {
        const struct timespec d = {0, 5000000};
        nanosleep(&d, NULL);
    }
    double t[2];
    t[0] = now();
    MPI_Request req = MPI_REQUEST_NULL;
    const int rc = nb ? complete(k, x, MPI_Ibarrier(x->comm, &req), &req) : MPI_Barrier(x->comm);
    t[1] = now();
    check_rc(o, rc, MPI_SUCCESS);
    double* all = xmalloc(sizeof(double) * 2 * x->size);
    PMPI_Allgather(t, 2, MPI_DOUBLE, all, 2, MPI_DOUBLE, x->comm);
    int last = 0;
    for (int i = 0; i < x->size; ++i)
        if (all[2 * i] > all[2 * last])
            last = i;
    if (t[1] < all[2 * last])
        failf(o, "left the barrier %.6f s before rank %d entered it", all[2 * last] - t[1], last);
    free(all);
}

static void run_case(const struct ctx* x, const struct kase* k, struct outcome* o)
{
    o->failed = o->noted = 0;
    o->detail[0] = o->note[0] = 0;
    switch (base(k->coll)) {
    case C_BCAST:
        run_bcast(x, k, o);
        break;
    case C_BARRIER:
        run_barrier(x, k, o);
        break;
    case C_REDUCE:
    case C_ALLREDUCE:
    case C_RSB:
        run_reduction(x, k, o);
        break;
    default:
        run_gather_like(x, k, o);
    }
}

/* ---- reporting --------------------------------------------------------- */
static const char* algorithm(int coll)
{
    static char buf[NCOLL][96];
    if (opt.expect)
        return opt.expect;
    const char* off = getenv("HASHI_COLL");
    const char* v = getenv(coll_env[coll]);
    if (off && strcmp(off, "off") == 0)
        snprintf(buf[coll], sizeof buf[coll], "mpich(HASHI_COLL=off)");
    else
        snprintf(buf[coll], sizeof buf[coll], "%s", v && *v ? v : "auto");
    return buf[coll];
}

/* The case, and a command line that reruns just it (with the settings
 * of the environment that shape the algorithm). */
static void describe(const struct ctx* x, const struct kase* k, char* out, size_t n)
{
    const char* tn = k->type >= 0 ? types[k->type].name : "-";
    const char* on = k->op >= 0 ? ops[k->op].name : "-";
    const char* alg = algorithm(k->coll);
    char env[256] = "", args[256] = "";
    static const char* shaping[] = {"HASHI_COLL", "HASHI_COLL_WAN_SENDERS", "HASHI_COLL_SEGMENT"};
    for (size_t i = 0; i < sizeof shaping / sizeof *shaping; ++i) {
        const char* v = getenv(shaping[i]);
        if (v && *v)
            snprintf(env + strlen(env), sizeof env - strlen(env), "%s=%.32s ", shaping[i], v);
    }
    const char* forced = getenv(coll_env[k->coll]);
    if (forced && *forced)
        snprintf(env + strlen(env), sizeof env - strlen(env), "%s=%.32s ", coll_env[k->coll], forced);
    if (k->type >= 0)
        snprintf(args + strlen(args), sizeof args - strlen(args), " --type '%s'", tn);
    if (k->op >= 0)
        snprintf(args + strlen(args), sizeof args - strlen(args), " --op %s", on);
    if (k->root >= 0)
        snprintf(args + strlen(args), sizeof args - strlen(args), " --root %d", k->root);
    snprintf(out, n,
        "%s comm=%s of %d [world ranks %s] type=%s op=%s count=%d root=%d inplace=%d variant=%d algorithm=%s | rerun: "
        "%scollcheck --coll %s --comm %s%s --count %d --inplace %d --variant %d --seed %llu",
        coll_name[k->coll], x->name, x->size, x->members, tn, on, k->count, k->root, k->inplace, k->variant, alg, env,
        coll_name[k->coll], x->kind, args, k->count, k->inplace, k->variant, (unsigned long long)opt.seed);
}

struct record {
    int kase;
    int rank;
    int note; /* 1: MPICH's own result was wrong (not a failure of ours) */
    char detail[600];
};

/* Gathers the records of a batch to rank 0 of the communicator, which
 * prints one line per failing case (and the first case where MPICH itself
 * was wrong). Returns the number of failing cases; adds noted ones to *notes. */
static int flush(const struct ctx* x, const struct caselist* l, struct record* recs, int nrec, long* notes)
{
    int* counts = NULL;
    int* displs = NULL;
    struct record* all = NULL;
    const int bytes = nrec * (int)sizeof(struct record);
    if (x->rank == 0)
        counts = xmalloc(sizeof(int) * x->size), displs = xmalloc(sizeof(int) * x->size);
    PMPI_Gather(&bytes, 1, MPI_INT, counts, 1, MPI_INT, 0, x->comm);
    int total = 0;
    if (x->rank == 0) {
        for (int i = 0; i < x->size; ++i)
            displs[i] = total, total += counts[i];
        all = xmalloc((size_t)total);
    }
    PMPI_Gatherv(recs, bytes, MPI_BYTE, all, counts, displs, MPI_BYTE, 0, x->comm);
    int failed = 0;
    if (x->rank == 0) {
        const int nall = total / (int)sizeof(struct record);
        for (int note = 0; note <= 1; ++note) {
            /* Case by case in order; records arrive in rank order, so the
             * first record of a case is from its lowest rank. */
            for (int done = 0, shown = 0;;) {
                int next = -1;
                for (int i = 0; i < nall; ++i)
                    if (all[i].note == note && all[i].kase >= done && (next < 0 || all[i].kase < all[next].kase))
                        next = i;
                if (next < 0)
                    break;
                const int kase = all[next].kase;
                int ranks = 0;
                for (int i = 0; i < nall; ++i)
                    ranks += all[i].note == note && all[i].kase == kase;
                char d[1024];
                describe(x, &l->v[kase], d, sizeof d);
                if (note) {
                    if (!shown++ && !*notes)
                        printf("collcheck: NOTE (not counted) %s: rank %d (world %d): %s [%d of %d ranks]\n", d,
                            all[next].rank, x->world_of[all[next].rank], all[next].detail, ranks, x->size);
                } else if (++failed <= opt.max_report) {
                    printf("collcheck: FAIL %s: rank %d (world %d): %s [%d of %d ranks wrong]\n", d, all[next].rank,
                        x->world_of[all[next].rank], all[next].detail, ranks, x->size);
                }
                *notes += note;
                done = kase + 1;
            }
        }
        fflush(stdout);
        free(all), free(counts), free(displs);
    }
    return failed;
}

/* Runs every case of one collective on one communicator; counts cases,
 * failures and MPICH's own wrong results at the communicator's rank 0. */
static void run_coll(const struct ctx* x, int coll, long* ncases, long* nfailed, long* nnotes)
{
    struct caselist l = {0};
    enumerate(coll, x->size, &l);
    enum { BATCH = 48 };
    struct record* recs = xmalloc(sizeof(struct record) * 2 * BATCH);
    int nrec = 0;
    long failed = 0, notes = 0;
    for (int i = 0; i < l.n; ++i) {
        if (opt.trace && x->rank == 0) {
            char d[1024];
            describe(x, &l.v[i], d, sizeof d);
            printf("collcheck: case %d: %s\n", i, d);
            fflush(stdout);
        }
        struct outcome o;
        run_case(x, &l.v[i], &o);
        if (o.failed) {
            recs[nrec] = (struct record) {i, x->rank, 0, ""};
            snprintf(recs[nrec].detail, sizeof recs[nrec].detail, "%s", o.detail);
            ++nrec;
        }
        if (o.noted) {
            recs[nrec] = (struct record) {i, x->rank, 1, ""};
            snprintf(recs[nrec].detail, sizeof recs[nrec].detail, "%s", o.note);
            ++nrec;
        }
        /* Every rank flushes at the same cases: flush is collective. */
        if ((i + 1) % BATCH == 0 || i + 1 == l.n) {
            failed += flush(x, &l, recs, nrec, &notes);
            nrec = 0;
        }
    }
    if (x->rank == 0)
        *ncases += l.n, *nfailed += failed, *nnotes += notes;
    free(recs);
    free(l.v);
}

/* ---- communicators ----------------------------------------------------- */
static void finish_ctx(struct ctx* x, const char* kind, int color)
{
    PMPI_Comm_rank(x->comm, &x->rank);
    PMPI_Comm_size(x->comm, &x->size);
    PMPI_Comm_set_errhandler(x->comm, MPI_ERRORS_RETURN);
    snprintf(x->kind, sizeof x->kind, "%s", kind);
    if (color >= 0)
        snprintf(x->name, sizeof x->name, "%s/%d", kind, color);
    else
        snprintf(x->name, sizeof x->name, "%s", kind);
    x->world_of = xmalloc(sizeof(int) * x->size);
    PMPI_Allgather(&world_rank, 1, MPI_INT, x->world_of, 1, MPI_INT, x->comm);
    x->members[0] = 0;
    for (int i = 0; i < x->size; ++i) {
        const size_t at = strlen(x->members);
        snprintf(x->members + at, sizeof x->members - at, "%s%d", i ? "," : "", x->world_of[i]);
    }
}

/* Makes this rank's communicator of a kind; returns 0 for an unknown kind. */
static int make_ctx(const char* kind, struct ctx* x)
{
    const int w = world_rank, P = world_size;
    int color = 0, key = w;
    if (strcmp(kind, "world") == 0) {
        x->comm = MPI_COMM_WORLD;
        finish_ctx(x, kind, -1);
        return 1;
    } else if (strcmp(kind, "evenodd") == 0) {
        color = w % 2;
    } else if (strcmp(kind, "reverse") == 0) {
        key = P - w;
    } else if (strcmp(kind, "shuffle") == 0) {
        key = (int)(mix64((uint64_t)w) % 1000);
    } else if (strcmp(kind, "thirds") == 0) {
        color = w % 3, key = -w;
    } else if (strcmp(kind, "oneleft") == 0) {
        /* World rank 0's cluster keeps only its last rank; its other ranks
         * form a second communicator. */
        const int c0 = cluster_of_world[0];
        int kept = 0;
        for (int i = 0; i < P; ++i)
            if (cluster_of_world[i] == c0)
                kept = i;
        color = cluster_of_world[w] == c0 && w != kept;
    } else {
        return 0;
    }
    PMPI_Comm_split(MPI_COMM_WORLD, color, key, &x->comm);
    finish_ctx(x, kind, strcmp(kind, "reverse") == 0 || strcmp(kind, "shuffle") == 0 ? -1 : color);
    return 1;
}

/* ---- options ----------------------------------------------------------- */
static void usage(FILE* f)
{
    fprintf(f,
        "usage: collcheck [options]\n"
        "  --coll LIST      collectives, comma-separated (default all): bcast, reduce, allreduce,\n"
        "                   allgather, allgatherv, alltoall, alltoallv, barrier, reduce_scatter_block,\n"
        "                   ibcast, ireduce, iallreduce, ibarrier\n"
        "  --comm LIST      communicators (default world,evenodd,reverse,oneleft): world, evenodd\n"
        "                   (split by rank parity), reverse (world reversed), shuffle (world permuted),\n"
        "                   thirds (split by rank mod 3, reversed), oneleft (world rank 0's cluster\n"
        "                   cut down to its last rank, the rest of it apart)\n"
        "  --quick          a few types per family instead of every type, fewer counts and roots\n"
        "  --type NAME      only this datatype (as printed, e.g. MPI_DOUBLE, 'vector(2,1,3,int)')\n"
        "  --op NAME        only this op (e.g. MPI_SUM, user_commutative)\n"
        "  --count N, --root N, --inplace 0|1, --variant N   only cases with these values\n"
        "  --seed N         input seed (default 1)\n"
        "  --large N        the large count, in elements (default 100003)\n"
        "  --expect NAME    the algorithm to name in reports (default: from HASHI_COLL_<COLL>)\n"
        "  --max-report N   print at most N failing cases per batch (default 20)\n"
        "  --trace          print every case before running it (to find a hang)\n"
        "  --list           list the datatypes and ops and exit\n");
}

static int parse_int(const char* opt_name, const char* s, long lo, long hi, long* out)
{
    char* end;
    errno = 0;
    const long v = s ? strtol(s, &end, 10) : 0;
    if (!s || !*s || *end || errno || v < lo || v > hi) {
        if (world_rank == 0)
            fprintf(stderr, "collcheck: %s wants an integer from %ld to %ld, got '%s'\n", opt_name, lo, hi,
                s ? s : "(nothing)");
        return 0;
    }
    *out = v;
    return 1;
}

static int parse_colls(const char* s)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    for (char* tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        int found = 0;
        for (int c = 0; c < NCOLL; ++c)
            if (strcmp(tok, coll_name[c]) == 0 || strcmp(tok, "all") == 0)
                opt.colls[c] = found = 1;
        if (!found) {
            if (world_rank == 0)
                fprintf(stderr, "collcheck: --coll: unknown collective '%s'\n", tok);
            return 0;
        }
    }
    return 1;
}

static int parse_options(int argc, char** argv)
{
    opt.seed = 1;
    opt.large = 100003;
    opt.max_report = 20;
    opt.f_type = opt.f_op = opt.f_count = opt.f_root = opt.f_inplace = opt.f_variant = -1;
    snprintf(opt.comms, sizeof opt.comms, "world,evenodd,reverse,oneleft");
    int any_coll = 0;
    for (int i = 1; i < argc; ++i) {
        const char* a = argv[i];
        const char* v = i + 1 < argc ? argv[i + 1] : NULL;
        long n;
        if (strcmp(a, "--quick") == 0) {
            opt.quick = 1;
        } else if (strcmp(a, "--trace") == 0) {
            opt.trace = 1;
        } else if (strcmp(a, "--list") == 0) {
            opt.trace = 2;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            if (world_rank == 0)
                usage(stdout);
            return -1;
        } else if (!v) {
            if (world_rank == 0)
                fprintf(stderr, "collcheck: %s: unknown option, or its value is missing (--help lists them)\n", a);
            return 0;
        } else {
            ++i;
            if (strcmp(a, "--coll") == 0) {
                if (!parse_colls(v))
                    return 0;
                any_coll = 1;
            } else if (strcmp(a, "--comm") == 0) {
                snprintf(opt.comms, sizeof opt.comms, "%s", v);
            } else if (strcmp(a, "--type") == 0) {
                snprintf(opt_type, sizeof opt_type, "%s", v);
            } else if (strcmp(a, "--op") == 0) {
                snprintf(opt_op, sizeof opt_op, "%s", v);
            } else if (strcmp(a, "--count") == 0) {
                if (!parse_int(a, v, 0, 1 << 28, &n))
                    return 0;
                opt.f_count = (int)n;
            } else if (strcmp(a, "--root") == 0) {
                if (!parse_int(a, v, 0, 1 << 20, &n))
                    return 0;
                opt.f_root = (int)n;
            } else if (strcmp(a, "--inplace") == 0) {
                if (!parse_int(a, v, 0, 1, &n))
                    return 0;
                opt.f_inplace = (int)n;
            } else if (strcmp(a, "--variant") == 0) {
                if (!parse_int(a, v, 0, 2, &n))
                    return 0;
                opt.f_variant = (int)n;
            } else if (strcmp(a, "--seed") == 0) {
                if (!parse_int(a, v, 0, 1L << 40, &n))
                    return 0;
                opt.seed = (uint64_t)n;
            } else if (strcmp(a, "--large") == 0) {
                if (!parse_int(a, v, 1, 1 << 26, &n))
                    return 0;
                opt.large = (int)n;
            } else if (strcmp(a, "--max-report") == 0) {
                if (!parse_int(a, v, 0, 1 << 20, &n))
                    return 0;
                opt.max_report = (int)n;
            } else if (strcmp(a, "--expect") == 0) {
                opt.expect = v;
            } else {
                if (world_rank == 0)
                    fprintf(stderr, "collcheck: %s: unknown option (--help lists them)\n", a);
                return 0;
            }
        }
    }
    if (!any_coll)
        for (int c = 0; c < NCOLL; ++c)
            opt.colls[c] = 1;
    /* Check the communicator names before any collective runs. */
    char buf[256];
    snprintf(buf, sizeof buf, "%s", opt.comms);
    for (char* tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        static const char* known[] = {"world", "evenodd", "reverse", "shuffle", "thirds", "oneleft"};
        int ok = 0;
        for (size_t j = 0; j < sizeof known / sizeof *known; ++j)
            ok |= strcmp(tok, known[j]) == 0;
        if (!ok) {
            if (world_rank == 0)
                fprintf(stderr, "collcheck: --comm: unknown communicator '%s'\n", tok);
            return 0;
        }
    }
    return 1;
}

/* Resolves --type and --op to table indices once the tables exist. */
static int resolve_filters(void)
{
    if (opt_type[0]) {
        for (int i = 0; i < ntypes; ++i)
            if (strcmp(types[i].name, opt_type) == 0)
                opt.f_type = i;
        if (opt.f_type < 0) {
            if (world_rank == 0)
                fprintf(stderr, "collcheck: --type: no datatype '%s' here (--list shows them)\n", opt_type);
            return 0;
        }
    }
    if (opt_op[0]) {
        for (int i = 0; i < nops; ++i)
            if (strcmp(ops[i].name, opt_op) == 0)
                opt.f_op = i;
        if (opt.f_op < 0) {
            if (world_rank == 0)
                fprintf(stderr, "collcheck: --op: no op '%s' (--list shows them)\n", opt_op);
            return 0;
        }
    }
    return 1;
}

/* The (type, op) pairs to test: MPI's rules, and a local reduction of a
 * few elements must work in MPICH (it defines what is supported). */
static void validate_pairs(void)
{
    for (int ti = 0; ti < ntypes; ++ti) {
        const struct ttype* t = &types[ti];
        int family = t->family;
        if (t->basic != MPI_DATATYPE_NULL) {
            const struct ttype* b = find_type(t->basic);
            family = b ? b->family : 0;
        }
        int refused_here = 0;
        for (int oi = 0; oi < nops; ++oi) {
            const struct top* o = &ops[oi];
            const int mpi_ok = o->user ? (t->user & o->user) != 0 : (o->families & family) != 0;
            allowed[ti][oi] = 0;
            if (!mpi_ok)
                continue;
            const struct block bl = {0, 3};
            struct tbuf a, b;
            tb_init(&a, t->dt, &bl, 1);
            tb_init(&b, t->dt, &bl, 1);
            unsigned char* s = gen_stream(t, o->cls, 7, 0, 2, 0, 3);
            tb_fill(&a, &bl, 1, s);
            tb_fill(&b, &bl, 1, s);
            if (PMPI_Reduce_local(a.buf, b.buf, 3, t->dt, o->op) == MPI_SUCCESS)
                allowed[ti][oi] = 1;
            else
                ++refused_here;
            free(s);
            tb_free(&a);
            tb_free(&b);
        }
        if (refused_here) {
            refused += refused_here;
            const size_t at = strlen(refused_list);
            if (at + 100 < sizeof refused_list)
                snprintf(refused_list + at, 100, " %.40s(%d ops)", t->name, refused_here);
        }
    }
}

int main(int argc, char** argv)
{
    MPI_Init(&argc, &argv);
    PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &world_size);
    PMPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    PMPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    int st = parse_options(argc, argv);
    make_types();
    check_types();
    make_ops();
    if (st > 0)
        st = resolve_filters();
    if (st <= 0) {
        MPI_Finalize();
        return st < 0 ? 0 : 2;
    }
    validate_pairs();
    if (opt.trace == 2) {
        if (world_rank == 0) {
            for (int i = 0; i < ntypes; ++i) {
                printf("type %-28s size %3d extent %3ld ops:", types[i].name, types[i].size, (long)types[i].extent);
                for (int o = 0; o < nops; ++o)
                    if (allowed[i][o])
                        printf(" %s", ops[o].name);
                printf("\n");
            }
        }
        MPI_Finalize();
        return 0;
    }

    /* Clusters of the world ranks, for the communicators and the reports. */
    const char* cid = getenv("HASHI_CLUSTER_ID");
    int mine = cid ? atoi(cid) : 0;
    cluster_of_world = xmalloc(sizeof(int) * world_size);
    PMPI_Allgather(&mine, 1, MPI_INT, cluster_of_world, 1, MPI_INT, MPI_COMM_WORLD);
    if (world_rank == 0) {
        printf("collcheck: %d ranks, cluster of each world rank:", world_size);
        for (int i = 0; i < world_size; ++i)
            printf(" %d", cluster_of_world[i]);
        printf("; %s mode, seed %llu, %d datatypes, %d ops\n", opt.quick ? "quick" : "full",
            (unsigned long long)opt.seed, ntypes, nops);
        if (unavailable[0])
            printf("collcheck: datatypes not tested (not in this MPI, or of another size):%s\n", unavailable);
        printf("collcheck: compared with the exact result only, and only where a Hashi algorithm is forced "
               "(MPICH 4.0.2's own collectives crash or go wrong on them):");
        for (int i = 0; i < ntypes; ++i)
            if (no_reference(&types[i]))
                printf(" %s", types[i].name);
        printf("\n");
        if (refused)
            printf("collcheck: %d type/op pairs MPICH refuses in a local reduction, not tested:%s\n", refused,
                refused_list);
        fflush(stdout);
    }

    long cases[NCOLL] = {0}, failed[NCOLL] = {0}, notes[NCOLL] = {0};
    double secs[NCOLL] = {0};
    char buf[256];
    snprintf(buf, sizeof buf, "%s", opt.comms);
    char* save = NULL;
    for (char* kind = strtok_r(buf, ",", &save); kind; kind = strtok_r(NULL, ",", &save)) {
        struct ctx x;
        memset(&x, 0, sizeof x);
        make_ctx(kind, &x);
        /* A collective through the interposer first: libhashi-coll builds a
         * communicator's hierarchy at its first blocking collective, and
         * its nonblocking ones run only on communicators that have one. */
        MPI_Barrier(x.comm);
        for (int c = 0; c < NCOLL; ++c) {
            if (!opt.colls[c])
                continue;
            PMPI_Barrier(MPI_COMM_WORLD);
            const double t0 = now();
            run_coll(&x, c, &cases[c], &failed[c], &notes[c]);
            secs[c] += now() - t0;
        }
        if (x.comm != MPI_COMM_WORLD)
            PMPI_Comm_free(&x.comm);
        free(x.world_of);
    }

    long tc[NCOLL], tf[NCOLL], tn[NCOLL];
    double ts[NCOLL];
    PMPI_Reduce(cases, tc, NCOLL, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    PMPI_Reduce(failed, tf, NCOLL, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    PMPI_Reduce(notes, tn, NCOLL, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    PMPI_Reduce(secs, ts, NCOLL, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    long all_cases = 0, all_failed = 0;
    if (world_rank == 0) {
        for (int c = 0; c < NCOLL; ++c) {
            if (!opt.colls[c])
                continue;
            printf("collcheck: %s (algorithm %s): %ld cases, %ld failed, %.1f s", coll_name[c], algorithm(c), tc[c],
                tf[c], ts[c]);
            if (tn[c])
                printf(" (MPICH's own result wrong in %ld cases, not counted)", tn[c]);
            printf("\n");
            all_cases += tc[c];
            all_failed += tf[c];
        }
        printf("collcheck: %ld cases, %ld failed\n", all_cases, all_failed);
        fflush(stdout);
    }
    PMPI_Bcast(&all_failed, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return all_failed ? 1 : 0;
}
