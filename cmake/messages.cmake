# Message catalogs (po/, src/cli/i18n.h). Each language in po/LINGUAS gets
# <build>/locale/<lang>/LC_MESSAGES/headroom.mo, where the binary looks first, made from
# po/<lang>.po and any po/<lang>.<part>.po beside it (msgcat, first translation wins), and
# checked by msgfmt --check (header, domain, plural forms).
find_program(HEADROOM_MSGFMT msgfmt)
find_program(HEADROOM_MSGCAT msgcat)
if(NOT HEADROOM_MSGFMT OR NOT HEADROOM_MSGCAT)
  message(WARNING "gettext's msgfmt/msgcat not found: headroom will speak English only "
                  "(scripts/install-deps installs gettext)")
  return()
endif()

file(STRINGS ${PROJECT_SOURCE_DIR}/po/LINGUAS linguas REGEX "^[^#]")
set(HEADROOM_LINGUAS)   # the languages built (cmake/install.cmake writes man pages in each)
set(HEADROOM_MO_FILES)
foreach(lang IN LISTS linguas)
  string(STRIP "${lang}" lang)
  list(APPEND HEADROOM_LINGUAS ${lang})
  file(GLOB parts CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/po/${lang}.po
       ${PROJECT_SOURCE_DIR}/po/${lang}.*.po)
  set(merged ${CMAKE_BINARY_DIR}/po/${lang}.po)
  set(mo ${CMAKE_BINARY_DIR}/locale/${lang}/LC_MESSAGES/headroom.mo)
  add_custom_command(
    OUTPUT ${mo}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/po
            ${CMAKE_BINARY_DIR}/locale/${lang}/LC_MESSAGES
    COMMAND ${HEADROOM_MSGCAT} --use-first --force-po --no-wrap -o ${merged} ${parts}
    COMMAND ${HEADROOM_MSGFMT} --check -o ${mo} ${merged}
    DEPENDS ${parts}
    COMMENT "Message catalog ${lang}")
  list(APPEND HEADROOM_MO_FILES ${mo})
  install(FILES ${mo} DESTINATION ${CMAKE_INSTALL_LOCALEDIR}/${lang}/LC_MESSAGES)
endforeach()
add_custom_target(headroom_messages ALL DEPENDS ${HEADROOM_MO_FILES})

# The catalogs against the sources: complete, no fuzzy entries, placeholders kept.
# No compiled code runs in it: the normal build alone runs it.
if(NOT HEADROOM_SANITIZE)
  add_test(NAME MessageCatalogs COMMAND python3 ${PROJECT_SOURCE_DIR}/tests/i18n/catalog_test.py
           ${PROJECT_SOURCE_DIR})
endif()
