# tools/gpu/build-variants.sh: sourced by variants.sh and cpu-variants.sh.
# build_variants SPEC ...: copies of the working tree in /tmp/v-NAME,
# installed side by side into /tmp/lib-NAME (logs in $out/install-NAME.log,
# R CMD INSTALL under the caller's environment: MAKEFLAGS, HISTBOOST_CUDA,
# ...), and the variants' names in $names. A SPEC is
#   NAME                  the working tree as it is
#   NAME:FILE:SED         the working tree with `sed -i SED FILE` applied
#   NAME:DIR/             the working tree with the files of DIR copied over
#                         src/cuda/ (e.g. the previous commit's, saved with
#                         git show before the run: the device has no git)
build_variants() {
  names=""
  for spec in "$@"; do
    name=${spec%%:*}
    rest=${spec#"${name}"}
    rm -rf "/tmp/v-${name}" "/tmp/lib-${name}"
    mkdir -p "/tmp/v-${name}" "/tmp/lib-${name}"
    tar --exclude=./gpu-host -cf - . | (cd "/tmp/v-${name}" && tar xf -)
    case "${rest}" in
      "") ;;
      :*:*) f=${rest#:}; f=${f%%:*}; sed -i "${rest#:"${f}":}" "/tmp/v-${name}/${f}" ;;
      :*/) cp "${rest#:}"* "/tmp/v-${name}/src/cuda/" ;;
      *) echo "bad spec ${spec}"; exit 2 ;;
    esac
    (cd "/tmp/v-${name}" && R CMD INSTALL --preclean -l "/tmp/lib-${name}" . > "${out}/install-${name}.log" 2>&1 ||
       echo "${name}: install failed") &
    names="${names} ${name}"
  done
  wait
}
