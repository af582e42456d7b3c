# SPDX-License-Identifier: Apache-2.0
# PP_CHECK_CFLAG(FLAG, ACTION-IF-OK): does the C compiler take FLAG
# (with -Werror, so that "unknown option" warnings count as no)?
AC_DEFUN([PP_CHECK_CFLAG], [
  AC_MSG_CHECKING([whether $CC accepts $1])
  pp_save_CFLAGS="$CFLAGS"
  CFLAGS="$CFLAGS -Werror $1"
  AC_COMPILE_IFELSE([AC_LANG_PROGRAM([], [])],
    [AC_MSG_RESULT([yes]); $2], [AC_MSG_RESULT([no])])
  CFLAGS="$pp_save_CFLAGS"
])

# PP_WARNINGS: -Wall -Wextra and friends for the compiler in use, and
# --enable-werror to make them fatal (CI does; a default -Werror only
# punishes people building with a newer compiler than ours).
AC_DEFUN([PP_WARNINGS], [
  AC_ARG_ENABLE([werror],
    [AS_HELP_STRING([--enable-werror], [treat compiler warnings as errors])],
    [pp_werror="$enableval"], [pp_werror=no])
  PP_CFLAGS=""
  for pp_flag in -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
                 -Wpointer-arith -Wformat=2 -Wundef; do
    PP_CHECK_CFLAG([$pp_flag], [PP_CFLAGS="$PP_CFLAGS $pp_flag"])
  done
  AS_IF([test "$pp_werror" = yes], [PP_CFLAGS="$PP_CFLAGS -Werror"])
  AC_SUBST([PP_CFLAGS])
])
