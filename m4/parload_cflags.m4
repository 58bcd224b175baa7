# PARLOAD_ADD_CFLAGS(VARIABLE, FLAGS)
# -----------------------------------
# Append to VARIABLE each of FLAGS that the C compiler accepts, warnings
# treated as errors so that unknown flags are really rejected.
AC_DEFUN([PARLOAD_ADD_CFLAGS], [
  for parload_flag in $2; do
    AS_VAR_PUSHDEF([parload_cache], [parload_cv_cflag_$parload_flag])
    AC_CACHE_CHECK([whether $CC accepts $parload_flag], [parload_cache], [
      parload_save_CFLAGS=$CFLAGS
      CFLAGS="$CFLAGS -Werror $parload_flag"
      AC_COMPILE_IFELSE([AC_LANG_PROGRAM([], [])],
        [AS_VAR_SET([parload_cache], [yes])],
        [AS_VAR_SET([parload_cache], [no])])
      CFLAGS=$parload_save_CFLAGS])
    AS_VAR_IF([parload_cache], [yes], [$1="$$1 $parload_flag"])
    AS_VAR_POPDEF([parload_cache])
  done
  AC_SUBST([$1])
])
