! SPDX-License-Identifier: BSD-3-Clause
! The Fortran interface (src/scash/scash.f90): a shared array written
! cyclically and read by all after a barrier, and a lock-protected counter.
program fortran_scash
    use mpi
    use scash
    implicit none
    integer :: ierr, provided, me, np, i, errors, total
    integer(c_int) :: rc
    type(c_ptr) :: p, q
    real(c_double), pointer :: a(:)
    integer(c_int), pointer :: counter
    type(scash_stats_t) :: stats

    call MPI_Init_thread(MPI_THREAD_MULTIPLE, provided, ierr)
    if (scash_init() /= SCASH_OK) call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
    me = scash_rank()
    np = scash_nprocs()
    rc = scash_alloc(int(8 * 4096, c_size_t), SCASH_CYCLIC, p)
    rc = ior(rc, scash_alloc(int(4, c_size_t), SCASH_BLOCK, q))
    if (rc /= SCASH_OK) call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
    call c_f_pointer(p, a, [4096])
    call c_f_pointer(q, counter)

    do i = me + 1, 4096, np
        a(i) = 2.0d0 * i
    end do
    do i = 1, 10
        rc = scash_lock(0)
        counter = counter + 1
        rc = scash_unlock(0)
    end do
    rc = scash_barrier()
    errors = 0
    do i = 1, 4096
        if (a(i) /= 2.0d0 * i) errors = errors + 1
    end do
    if (counter /= 10 * np) errors = errors + 1
    rc = scash_stats_total(stats)
    call MPI_Allreduce(errors, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    if (me == 0) then
        if (total == 0 .and. stats%lock_acquires == 10 * np) then
            print '(a,i0,a)', 'fortran: counter ', counter, ': ok'
        else
            print '(a,i0,a)', 'fortran: ', total, ' errors: FAILED'
        end if
    end if
    rc = scash_free(q)
    rc = scash_free(p)
    rc = scash_finalize()
    call MPI_Finalize(ierr)
    if (total /= 0) stop 1
end program fortran_scash
