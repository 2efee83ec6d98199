! SPDX-License-Identifier: BSD-3-Clause
! A Fortran program (use mpi) whose collectives must reach libhashi-coll:
! MPICH's Fortran bindings call the C MPI_* symbols, which the library
! defines. interposer.sh runs it across fake clusters with algorithms
! forced and HASHI_COLL_VERBOSE=1, checks the choices printed and the
! line this program prints: every result is compared with a value known in
! closed form (sums of integers and of halves, exact in any order).
program fortran_coll
    use mpi
    implicit none
    integer, parameter :: n = 100003
    integer :: ierr, me, np, i, j, root, errors, total, req(2)
    integer, allocatable :: ia(:), ib(:), ga(:), ta(:), tb(:)
    double precision, allocatable :: da(:), db(:)

    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, me, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)
    allocate (ia(n), ib(n), da(n), db(n), ga(np), ta(np), tb(np))
    errors = 0

    do i = 1, n
        ia(i) = me + i
        da(i) = 0.5d0 * me + i
    end do
    call MPI_Allreduce(ia, ib, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    call MPI_Allreduce(da, db, n, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
    do i = 1, n
        if (ib(i) /= np * (np - 1) / 2 + np * i) call wrong('allreduce integer sum', i)
        if (db(i) /= 0.25d0 * np * (np - 1) + dble(np) * i) call wrong('allreduce double sum', i)
    end do

    ib = ia
    call MPI_Allreduce(MPI_IN_PLACE, ib, n, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, ierr)
    do i = 1, n
        if (ib(i) /= np - 1 + i) call wrong('allreduce in place max', i)
    end do

    root = np - 1
    ib = 0
    if (me == root) ib = [(7 * i, i = 1, n)]
    call MPI_Bcast(ib, n, MPI_INTEGER, root, MPI_COMM_WORLD, ierr)
    do i = 1, n
        if (ib(i) /= 7 * i) call wrong('bcast', i)
    end do

    call MPI_Reduce(ia, ib, n, MPI_INTEGER, MPI_SUM, root, MPI_COMM_WORLD, ierr)
    if (me == root) then
        do i = 1, n
            if (ib(i) /= np * (np - 1) / 2 + np * i) call wrong('reduce', i)
        end do
    end if

    call MPI_Allgather(3 * me, 1, MPI_INTEGER, ga, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
    do j = 1, np
        if (ga(j) /= 3 * (j - 1)) call wrong('allgather', j)
    end do

    ta = [(100 * me + j - 1, j = 1, np)]
    call MPI_Alltoall(ta, 1, MPI_INTEGER, tb, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
    do j = 1, np
        if (tb(j) /= 100 * (j - 1) + me) call wrong('alltoall', j)
    end do

    ta = [(me + j, j = 1, np)]
    call MPI_Reduce_scatter_block(ta, ib, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    if (ib(1) /= np * (np - 1) / 2 + np * (me + 1)) call wrong('reduce_scatter_block', 1)

    ! Nonblocking forms, completed with MPI_Wait and MPI_Waitall.
    call MPI_Iallreduce(ia, ib, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, req(1), ierr)
    call MPI_Wait(req(1), MPI_STATUS_IGNORE, ierr)
    do i = 1, n
        if (ib(i) /= np * (np - 1) / 2 + np * i) call wrong('iallreduce', i)
    end do
    ga = 0
    if (me == 0) ga = [(11 * j, j = 1, np)]
    call MPI_Ibcast(ga, np, MPI_INTEGER, 0, MPI_COMM_WORLD, req(1), ierr)
    call MPI_Ibarrier(MPI_COMM_WORLD, req(2), ierr)
    call MPI_Waitall(2, req, MPI_STATUSES_IGNORE, ierr)
    do j = 1, np
        if (ga(j) /= 11 * j) call wrong('ibcast', j)
    end do

    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    call MPI_Allreduce(errors, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    if (me == 0) then
        if (total == 0) then
            print '(a,i0,a)', 'fortran_coll: ', np, ' ranks: OK'
        else
            print '(a,i0,a)', 'fortran_coll: ', total, ' wrong values: FAIL'
        end if
    end if
    call MPI_Finalize(ierr)

contains

    ! Counts a wrong value and names the first few.
    subroutine wrong(what, at)
        character(len=*), intent(in) :: what
        integer, intent(in) :: at
        errors = errors + 1
        if (errors <= 5) print '(a,i0,3a,i0)', 'fortran_coll: rank ', me, ': ', what, ' wrong at ', at
    end subroutine wrong
end program fortran_coll
