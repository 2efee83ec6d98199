C SPDX-License-Identifier: BSD-3-Clause
C
C hello_f77.f - the smallest useful MPI program, in fixed-form
C Fortran 77 with include 'mpif.h'.
C
C Demonstrates the mpif.h interface, where every call ends with an
C error argument.  Checks that every rank really took part: each rank
C contributes 1 to a sum-reduction, and rank 0 aborts with error code
C 1 unless the sum equals the number of ranks.
C
      program hello
      implicit none
      include 'mpif.h'
      integer ierr, rank, nproc, namelen, one, total
      integer rfirst, nfirst
      character*(MPI_MAX_PROCESSOR_NAME) host
      character*12 rstr, nstr

      call MPI_INIT(ierr)
      call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
      call MPI_COMM_SIZE(MPI_COMM_WORLD, nproc, ierr)
      call MPI_GET_PROCESSOR_NAME(host, namelen, ierr)
C     A zero-length substring is not valid Fortran 77.
      if (namelen .lt. 1) then
         host = 'unknown'
         namelen = 7
      endif

C     Fortran 77 has no I0 edit descriptor, so numbers are formatted
C     by hand to get the exact line the other languages print.
      call fmtint(rank, rstr, rfirst)
      call fmtint(nproc, nstr, nfirst)
      write (*, '(7A)') 'Hello from rank ', rstr(rfirst:12), ' of ',
     &     nstr(nfirst:12), ' on ', host(1:namelen), ' (F77)'

      one = 1
      total = 0
      call MPI_REDUCE(one, total, 1, MPI_INTEGER, MPI_SUM, 0,
     &     MPI_COMM_WORLD, ierr)
      if (rank .eq. 0) then
         call fmtint(total, rstr, rfirst)
         if (total .ne. nproc) then
            write (*, '(5A)') 'hello: expected ', nstr(nfirst:12),
     &           ' ranks, but ', rstr(rfirst:12), ' answered'
            call MPI_ABORT(MPI_COMM_WORLD, 1, ierr)
         endif
         write (*, '(3A)') 'hello: ', rstr(rfirst:12), ' ranks answered'
      endif

      call MPI_FINALIZE(ierr)
      end

C     Right-justified I12 output, plus the index of its first non-blank
C     character, gives a left-trimmed number without Fortran 90 ADJUSTL.
      subroutine fmtint(n, str, first)
      implicit none
      integer n, first
      character*12 str
      write (str, '(I12)') n
      first = 1
   10 if (first .lt. 12) then
         if (str(first:first) .eq. ' ') then
            first = first + 1
            goto 10
         endif
      endif
      end
