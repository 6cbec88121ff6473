# Writes OUT, a C++ file defining kSiteScript and kSiteStyle from the files SCRIPT and STYLE
# (run by the build whenever either changes: cmake -DSCRIPT=... -DSTYLE=... -DOUT=... -P this).
set(delim "opbench_asset")  # a raw string delimiter holds at most 16 characters
set(body "// Generated from src/site/assets by src/site/embed_assets.cmake: edit those files.\n#include \"site/assets.hpp\"\n\nnamespace opbench {\n")
foreach(pair "kSiteScript;${SCRIPT}" "kSiteStyle;${STYLE}")
  list(GET pair 0 name)
  list(GET pair 1 file)
  file(READ "${file}" text)
  string(FIND "${text}" ")${delim}\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "${file} holds the text )${delim}\" that ends the raw string it is embedded in")
  endif()
  string(APPEND body "\nconst char* const ${name} = R\"${delim}(${text})${delim}\";\n")
endforeach()
string(APPEND body "\n}  // namespace opbench\n")
file(WRITE "${OUT}.tmp" "${body}")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
