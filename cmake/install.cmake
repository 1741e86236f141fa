# What `make install` (cmake --install) and `make deb` (CPack) put on a machine:
#   bin/headroom
#   share/man/man1/headroom.1.gz, headroom-COMMAND.1.gz         (generated: cmake/generate_docs.cmake)
#   share/man/LANG/man1/...                                     (the same, in each language built)
#   share/bash-completion/completions/headroom, share/zsh/{vendor-completions|site-functions}/_headroom
#   share/locale/LANG/LC_MESSAGES/headroom.mo                   (cmake/messages.cmake)
#   share/headroom/{grafana,prometheus,config}/                 (share/, as they are)
#   lib/systemd/system/headroom-export.service, headroom-watch@.service,
#   headroom-guardian.service
#                                       (share/systemd, with this prefix's paths; not enabled)
#   share/doc/headroom/                                         (README.md, docs/*.md, *.png)
#   lib/python3/dist-packages/headroom/ (prefix /usr: Debian's path for packaged modules), else
#   lib/python3.X/dist-packages/headroom/ (the path Debian's python3.X reads below /usr/local
#   and other prefixes; X from /usr/bin/python3 at configure time): the Python companion
# The binary finds its catalogs relative to itself (main.cc), so nothing here is compiled in:
# the prefix is chosen at install time (cmake --install --prefix, CPack's /usr).

# Man pages and completions from the binary itself (under an emulator when cross-building),
# the pages also in each language whose catalog is built (cmake/messages.cmake).
set(HEADROOM_DOCS_DIR ${CMAKE_BINARY_DIR}/docs-generated)
string(REPLACE ";" "," HEADROOM_DOCS_LANGS "${HEADROOM_LINGUAS}")
add_custom_command(
  OUTPUT ${HEADROOM_DOCS_DIR}/stamp
  COMMAND ${CMAKE_COMMAND} -DHEADROOM=$<TARGET_FILE:headroom>
          "-DEMULATOR=${CMAKE_CROSSCOMPILING_EMULATOR}" -DSRC=${PROJECT_SOURCE_DIR}
          -DOUT=${HEADROOM_DOCS_DIR} "-DLANGS=${HEADROOM_DOCS_LANGS}"
          -P ${PROJECT_SOURCE_DIR}/cmake/generate_docs.cmake
  DEPENDS headroom ${HEADROOM_MO_FILES} ${PROJECT_SOURCE_DIR}/cmake/generate_docs.cmake
  COMMENT "Man pages and shell completions")
add_custom_target(headroom_docs ALL DEPENDS ${HEADROOM_DOCS_DIR}/stamp)

install(TARGETS headroom RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The guardian's lean worker, which `headroom guardian` finds at ../libexec/headroom/ beside its
# bin/ (docs/guardian.md "Its own memory").
install(TARGETS headroom-guardian RUNTIME DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/headroom)
install(DIRECTORY ${HEADROOM_DOCS_DIR}/man1 DESTINATION ${CMAKE_INSTALL_MANDIR})
foreach(lang IN LISTS HEADROOM_LINGUAS)
  install(DIRECTORY ${HEADROOM_DOCS_DIR}/${lang}/man1 DESTINATION ${CMAKE_INSTALL_MANDIR}/${lang})
endforeach()
install(FILES ${HEADROOM_DOCS_DIR}/completions/headroom
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions)
install(DIRECTORY share/grafana share/prometheus DESTINATION ${CMAKE_INSTALL_DATADIR}/headroom)
if(EXISTS ${PROJECT_SOURCE_DIR}/share/config)
  install(DIRECTORY share/config DESTINATION ${CMAKE_INSTALL_DATADIR}/headroom)
endif()
install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
file(GLOB HEADROOM_DOC_PAGES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/docs/*.md
     ${PROJECT_SOURCE_DIR}/docs/*.png)
install(FILES ${HEADROOM_DOC_PAGES} DESTINATION ${CMAKE_INSTALL_DOCDIR})

# The Python version whose dist-packages a prefix other than /usr gets (Debian's python3.X
# reads /usr/local/lib/python3.X/dist-packages); "3" when there is no /usr/bin/python3.
set(HEADROOM_PYTHON_VERSION 3)
if(EXISTS /usr/bin/python3)
  execute_process(COMMAND /usr/bin/python3 -c "import sys; print('%d.%d' % sys.version_info[:2])"
                  OUTPUT_VARIABLE HEADROOM_PYTHON_VERSION OUTPUT_STRIP_TRAILING_WHITESPACE
                  RESULT_VARIABLE py_rc)
  if(NOT py_rc EQUAL 0)
    set(HEADROOM_PYTHON_VERSION 3)
  endif()
endif()
# The systemd units name the binary and the docs by path: rewrite /usr to the prefix being
# installed to; zsh's and Python's directories depend on the prefix too. Both are decided at install time,
# so `cmake --install --prefix` and CPack (prefix /usr) each get their own.
set(HEADROOM_UNITS_CODE [[
  set(prefix "${CMAKE_INSTALL_PREFIX}")
  set(staging "@CMAKE_BINARY_DIR@/systemd-units")
  file(MAKE_DIRECTORY "${staging}")
  file(GLOB units "@PROJECT_SOURCE_DIR@/share/systemd/*.service")
  set(rewritten)
  foreach(unit IN LISTS units)
    get_filename_component(name "${unit}" NAME)
    file(READ "${unit}" text)
    string(REPLACE "/usr/bin/headroom" "${prefix}/@CMAKE_INSTALL_BINDIR@/headroom" text "${text}")
    string(REPLACE "/usr/share/doc/headroom" "${prefix}/@CMAKE_INSTALL_DOCDIR@" text "${text}")
    file(WRITE "${staging}/${name}" "${text}")
    list(APPEND rewritten "${staging}/${name}")
  endforeach()
  file(INSTALL DESTINATION "${prefix}/lib/systemd/system" TYPE FILE FILES ${rewritten})
  # zsh reads vendor-completions under /usr (Debian, Ubuntu) and site-functions elsewhere.
  if(prefix STREQUAL "/usr")
    set(zsh_dir "${prefix}/@CMAKE_INSTALL_DATADIR@/zsh/vendor-completions")
  else()
    set(zsh_dir "${prefix}/@CMAKE_INSTALL_DATADIR@/zsh/site-functions")
  endif()
  file(INSTALL DESTINATION "${zsh_dir}" TYPE FILE FILES "@HEADROOM_DOCS_DIR@/completions/_headroom")
  # The Python companion (python/headroom, docs/companion.md): where the system's python3
  # finds it for this prefix.
  if(prefix STREQUAL "/usr")
    set(py_dir "${prefix}/lib/python3/dist-packages")
  else()
    set(py_dir "${prefix}/lib/python@HEADROOM_PYTHON_VERSION@/dist-packages")
  endif()
  file(GLOB py_files "@PROJECT_SOURCE_DIR@/python/headroom/*.py")
  file(INSTALL DESTINATION "${py_dir}/headroom" TYPE FILE FILES ${py_files})
]])
string(CONFIGURE "${HEADROOM_UNITS_CODE}" HEADROOM_UNITS_CODE @ONLY)
install(CODE "${HEADROOM_UNITS_CODE}")

# The shipped units parsed: one journal for watch and export, the watch unit hardened.
# No compiled code runs in it: the normal build alone runs it.
if(NOT HEADROOM_SANITIZE)
  add_test(NAME SystemdUnits COMMAND ${PROJECT_SOURCE_DIR}/tests/install/systemd_units_test.sh
           ${PROJECT_SOURCE_DIR})
  # The guardian's unit through systemd-analyze verify (skipped without it).
  add_test(NAME GuardianUnit COMMAND ${PROJECT_SOURCE_DIR}/tests/install/guardian_unit_test.sh
           ${PROJECT_SOURCE_DIR} ${CMAKE_BINARY_DIR})
  set_tests_properties(GuardianUnit PROPERTIES SKIP_RETURN_CODE 77)
endif()

# The package and the install tree, checked where they are meant for: a native build without
# sanitizers (an ASan binary is not what anyone installs; a cross build's binary does not run
# here without an emulator).
if(NOT HEADROOM_SANITIZE AND NOT CMAKE_CROSSCOMPILING)
  add_test(NAME InstallTree COMMAND ${PROJECT_SOURCE_DIR}/tests/install/install_tree_test.sh ${CMAKE_BINARY_DIR})
  find_program(HEADROOM_DPKG_DEB dpkg-deb)
  if(HEADROOM_DPKG_DEB)
    add_test(NAME DebPackage COMMAND ${PROJECT_SOURCE_DIR}/scripts/test-deb ${CMAKE_BINARY_DIR})
    # Both write below the build tree's package/ and _CPack_Packages/: one at a time.
    set_tests_properties(DebPackage InstallTree PROPERTIES RUN_SERIAL TRUE)
  endif()
endif()
