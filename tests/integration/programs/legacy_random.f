! SPDX-License-Identifier: BSD-3-Clause
! Legacy FORTRAN 77 as NPB writes it, which gfortran >= 10 rejects unless
! the wrapper adds -fallow-argument-mismatch -fallow-invalid-boz:
!  - BOZ constants in DATA for REAL variables and in the nonstandard X form,
!  - one external routine (ours, and MPI_BCAST through mpif.h) called with
!    buffers of different types.
! Each rank draws numbers from a multiplicative congruential generator
! seeded by rank 0's broadcast; rank 0 checks every rank drew the same sum.
      program legacy_random
      implicit none
      include 'mpif.h'
      integer ierr, rank, nprocs, i
      integer seed(2)
      double precision params(2), sum, total, one
      double precision randu
      integer mask, small
      data mask /Z'7FFFFFFF'/
      data one /Z'3FF0000000000000'/
      data small /X'10'/

      call mpi_init(ierr)
      call mpi_comm_rank(MPI_COMM_WORLD, rank, ierr)
      call mpi_comm_size(MPI_COMM_WORLD, nprocs, ierr)
      if (rank .eq. 0) then
         call fill(seed, 2)
         call fill(params, 2)
         seed(1) = iand(seed(1) * 12345 + small, mask)
      endif
!     The same routine with an INTEGER and a DOUBLE PRECISION buffer.
      call mpi_bcast(seed, 2, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
      call mpi_bcast(params, 2, MPI_DOUBLE_PRECISION, 0,
     &               MPI_COMM_WORLD, ierr)
      sum = 0.0d0
      do i = 1, 1000
         sum = sum + randu(seed(1), mask) * one
      end do
      call mpi_reduce(sum, total, 1, MPI_DOUBLE_PRECISION, MPI_SUM, 0,
     &                MPI_COMM_WORLD, ierr)
      if (rank .eq. 0) then
         if (abs(total - nprocs * sum) .lt. 1.0d-9 * total .and.
     &       sum .gt. 100.0d0 .and. sum .lt. 900.0d0) then
            write(*, '(A,I3,A,F12.6)') 'legacy_random: ', nprocs,
     &           ' ranks agree, sum ', sum
         else
            write(*, '(A,2F16.6)') 'legacy_random: MISMATCH ', total,
     &           nprocs * sum
            call mpi_abort(MPI_COMM_WORLD, 3, ierr)
         endif
      endif
      call mpi_finalize(ierr)
      end

!     Park-Miller minimal standard generator: x = 16807 x mod (2^31 - 1).
      double precision function randu(x, mask)
      integer x, mask
      integer*8 next
      next = mod(int(x, 8) * 16807_8, int(mask, 8))
      x = int(next)
      randu = dble(x) / dble(mask)
      end

!     Fills a buffer with small numbers, whatever its type (as F77 codes do).
      subroutine fill(buf, n)
      integer n, buf(n), k
      do k = 1, n
         buf(k) = k + 41
      end do
      end
