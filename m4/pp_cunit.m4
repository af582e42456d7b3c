# SPDX-License-Identifier: Apache-2.0
# PP_CHECK_CUNIT: CUnit for `make check`, through pkg-config cunit, with a
# plain header/library probe as the fallback (some builds ship no .pc).
AC_DEFUN([PP_CHECK_CUNIT], [
  PKG_CHECK_MODULES([CUNIT], [cunit], [pp_cunit=yes], [
    pp_save_LIBS="$LIBS"
    AC_CHECK_HEADER([CUnit/Basic.h],
      [AC_CHECK_LIB([cunit], [CU_initialize_registry],
        [pp_cunit=yes; CUNIT_CFLAGS=""; CUNIT_LIBS="-lcunit"], [pp_cunit=no])],
      [pp_cunit=no])
    LIBS="$pp_save_LIBS"
  ])
  AS_IF([test "$pp_cunit" != yes], [
    AC_MSG_ERROR([CUnit was not found; the test suite needs it.
    On Debian/Ubuntu: apt-get install libcunit1-dev])
  ])
  AC_SUBST([CUNIT_CFLAGS])
  AC_SUBST([CUNIT_LIBS])
])
