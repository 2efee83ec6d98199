! SPDX-License-Identifier: BSD-3-Clause
!
! hello_f90.f90 - the smallest useful MPI program, in free-form Fortran
! with the "use mpi" module.
!
! Demonstrates the mpi module, which lets the compiler check the
! arguments of many calls.  Checks that every rank really took part: each
! rank contributes 1 to a sum-reduction, and rank 0 aborts with error
! code 1 unless the sum equals the number of ranks.

program hello
  use mpi
  implicit none
  integer :: ierr, rank, nproc, namelen, one, total
  character(len=MPI_MAX_PROCESSOR_NAME) :: host

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nproc, ierr)
  call MPI_Get_processor_name(host, namelen, ierr)
  ! Guard the substring below against an empty or over-long length.
  if (namelen < 1 .or. namelen > len(host)) then
     host = 'unknown'
     namelen = len_trim(host)
  end if

  write (*, '(a,i0,a,i0,a,a,a)') 'Hello from rank ', rank, ' of ', nproc, &
       ' on ', host(1:namelen), ' (F90)'

  one = 1
  total = 0
  call MPI_Reduce(one, total, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
     if (total /= nproc) then
        write (*, '(a,i0,a,i0,a)') 'hello: expected ', nproc, ' ranks, but ', &
             total, ' answered'
        call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
     end if
     write (*, '(a,i0,a)') 'hello: ', total, ' ranks answered'
  end if

  call MPI_Finalize(ierr)
end program hello
