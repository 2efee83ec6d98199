! SPDX-License-Identifier: BSD-3-Clause
! Fortran interface to SCASH (scash.h) through ISO_C_BINDING. Installed as
! source next to scash.h; compile it with your program, for example
!   mpifort -o prog $prefix/include/scash.f90 prog.f90 -lhashi-scash
! Shared arrays: scash_alloc gives a c_ptr; map it with c_f_pointer.
! Every function returns SCASH_OK (0) or an error code, as in C.
module scash
    use, intrinsic :: iso_c_binding
    implicit none

    integer(c_int), parameter :: SCASH_OK = 0, SCASH_ERR_NOT_INITIALIZED = 1, SCASH_ERR_ARG = 2, &
        SCASH_ERR_NOMEM = 3, SCASH_ERR_MPI = 4, SCASH_ERR_STATE = 5
    integer(c_int), parameter :: SCASH_BLOCK = 0, SCASH_CYCLIC = 1, SCASH_FIRST_TOUCH = 2

    type, bind(c) :: scash_stats_t
        integer(c_int64_t) :: read_faults, write_faults, pages_fetched, diffs_sent, diff_bytes, home_moves, &
            invalidations, barriers, lock_acquires, messages, bytes
    end type

    interface
        integer(c_int) function scash_init() bind(c, name="scash_init")
            import :: c_int
        end function
        integer(c_int) function scash_finalize() bind(c, name="scash_finalize")
            import :: c_int
        end function
        integer(c_int) function scash_rank() bind(c, name="scash_rank")
            import :: c_int
        end function
        integer(c_int) function scash_nprocs() bind(c, name="scash_nprocs")
            import :: c_int
        end function
        integer(c_int) function scash_alloc(size, dist, ptr) bind(c, name="scash_alloc")
            import :: c_int, c_size_t, c_ptr
            integer(c_size_t), value :: size
            integer(c_int), value :: dist
            type(c_ptr), intent(out) :: ptr
        end function
        integer(c_int) function scash_free(ptr) bind(c, name="scash_free")
            import :: c_int, c_ptr
            type(c_ptr), value :: ptr
        end function
        integer(c_int) function scash_barrier() bind(c, name="scash_barrier")
            import :: c_int
        end function
        integer(c_int) function scash_lock(id) bind(c, name="scash_lock")
            import :: c_int
            integer(c_int), value :: id
        end function
        integer(c_int) function scash_unlock(id) bind(c, name="scash_unlock")
            import :: c_int
            integer(c_int), value :: id
        end function
        integer(c_int) function scash_flush() bind(c, name="scash_flush")
            import :: c_int
        end function
        integer(c_int) function scash_set_migration(on, hysteresis) bind(c, name="scash_set_migration")
            import :: c_int
            integer(c_int), value :: on, hysteresis
        end function
        integer(c_int) function scash_set_home(ptr, size, proc) bind(c, name="scash_set_home")
            import :: c_int, c_size_t, c_ptr
            type(c_ptr), value :: ptr
            integer(c_size_t), value :: size
            integer(c_int), value :: proc
        end function
        integer(c_int) function scash_stats_total(stats) bind(c, name="scash_stats_total")
            import :: c_int, scash_stats_t
            type(scash_stats_t), intent(out) :: stats
        end function
    end interface
end module scash
