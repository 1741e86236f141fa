# headroom-guardian, the lean worker that `headroom guardian` execs (docs/guardian.md "Its own
# memory", docs/architecture.md). The guardian's run-time files are compiled once, as an
# object library that both headroom_lib and the worker take: the worker links them alone,
# each function in its own section (-ffunction-sections, then --gc-sections drops what no path
# of the loop calls), libstdc++ and fmt statically (fmt without std::locale), so that its process maps no flag parser,
# configuration parser, OpenSSL, yaml-cpp, RE2 or ncurses. Included before headroom_lib is
# defined: it takes these files out of HEADROOM_LIB_SOURCES.
set(HEADROOM_GUARDIAN_SOURCES
    base/bytes.cc base/message.cc base/result.cc base/safe_file.cc base/stored_message.cc
    base/text.cc base/wall_time.cc
    cli/guardian_run.cc cli/i18n.cc cli/message_text.cc
    gpu/dl_error.cc gpu/gpu.cc gpu/library_file.cc gpu/nvml.cc gpu/platform.cc
    guard/guard_events.cc guard/guard_record.cc guard/kill_policy.cc guard/pidfd.cc
    guardian/guardian_loop.cc guardian/guardian_record.cc guardian/guardian_sources.cc
    guardian/levels_reload.cc guardian/on_event.cc guardian/process_memory.cc
    guardian/victim_choice.cc guardian/worker_args.cc
    ladder/flush.cc
    pool/pool_advice.cc pool/pool_survey.cc
    samples/sampler.cc
    store/journal.cc store/recorded_run.cc store/sqlite.cc
    sys/holder_caps.cc sys/hwmon.cc sys/meminfo.cc sys/memory_lock.cc sys/pool_holders.cc
    sys/pool_levels.cc sys/process_survey.cc sys/processes.cc sys/psi.cc sys/sysroot.cc
    top/running_guards.cc top/top_model.cc)
list(TRANSFORM HEADROOM_GUARDIAN_SOURCES PREPEND ${PROJECT_SOURCE_DIR}/src/)
list(REMOVE_ITEM HEADROOM_LIB_SOURCES ${HEADROOM_GUARDIAN_SOURCES})

add_library(headroom_guardian_objs OBJECT ${HEADROOM_GUARDIAN_SOURCES})
target_include_directories(headroom_guardian_objs PUBLIC ${PROJECT_SOURCE_DIR}/src)
# fmt's headers only: headroom links libfmt.so, the worker its own copy (src/guardian_main_fmt.cc).
target_include_directories(headroom_guardian_objs SYSTEM PUBLIC
                           $<TARGET_PROPERTY:fmt::fmt,INTERFACE_INCLUDE_DIRECTORIES>)
target_link_libraries(headroom_guardian_objs PUBLIC nlohmann_json::nlohmann_json SQLite::SQLite3
                      Threads::Threads ${CMAKE_DL_LIBS})
target_compile_definitions(headroom_guardian_objs PUBLIC HEADROOM_VERSION="${PROJECT_VERSION}")
target_compile_options(headroom_guardian_objs PRIVATE -ffunction-sections -fdata-sections)
# Optimized for size outside Debug: the guardian's code is never hot (a reading a second far
# from the level), and each page of it the worker touches stays resident and locked
# (docs/guardian.md "Its own memory": -Os took the worker's text from 1.14 to 0.94 MB).
target_compile_options(headroom_guardian_objs PRIVATE $<$<NOT:$<CONFIG:Debug>>:-Os>)

function(headroom_guardian_worker)
  add_executable(headroom-guardian ${PROJECT_SOURCE_DIR}/src/guardian_main.cc
                 ${PROJECT_SOURCE_DIR}/src/guardian_main_fmt.cc)
  target_link_libraries(headroom-guardian PRIVATE headroom_guardian_objs)
  target_link_options(headroom-guardian PRIVATE -Wl,--gc-sections -Wl,--as-needed)
  if(NOT HEADROOM_SANITIZE)
    # The sanitizers' runtimes bring their own operator new and want the shared libstdc++.
    target_link_options(headroom-guardian PRIVATE -static-libstdc++ -static-libgcc)
  endif()
endfunction()
