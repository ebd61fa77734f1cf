# device.R: the GPU: whether this build has it, what it is, and the choice
# of device for training.

#' Is GPU training available?
#'
#' `hb_has_cuda()` says whether histboost was installed with its CUDA
#' learner (that is, `configure` found a working `nvcc`) and a usable NVIDIA
#' GPU is present now. `hb_device_info()` describes the GPU.
#'
#' To build the GPU learner, install histboost on a machine with the CUDA
#' toolkit; set the environment variable `NVCC` (or `CUDA_HOME`) when `nvcc`
#' is not on the `PATH`, `HISTBOOST_CUDA_ARCHS` (e.g. `"80 90"`) to choose the
#' GPU architectures, or `HISTBOOST_CUDA=no` to build without it.
#'
#' @param built_only `TRUE` to ask only whether the package was built with
#'   CUDA, whether or not a GPU is present.
#' @return `hb_has_cuda()`: `TRUE` or `FALSE`. `hb_device_info()`: a list with
#'   `built`, `available`, `status` (a sentence saying why the GPU can or
#'   cannot be used), and, when a GPU is available, its `name`,
#'   `compute_capability`, `multiprocessors`, `memory` and `free_memory`
#'   (bytes), `cuda_runtime` and `cuda_driver` versions (else `NA`).
#' @seealso The `device` argument of [histboost()].
#' @examples
#' hb_has_cuda()
#' hb_device_info()$status
#' @export
hb_has_cuda <- function(built_only = FALSE) {
  if (!is.logical(built_only) || length(built_only) != 1L || is.na(built_only)) {
    .hb_abort("`built_only` must be TRUE or FALSE.")
  }
  info <- .Call(C_hb_cuda_info)
  if (built_only) info$built else info$available
}

#' @rdname hb_has_cuda
#' @export
hb_device_info <- function() {
  .Call(C_hb_cuda_info)
}

# "cpu" or "cuda" for training, or a device error that says what is missing.
.hb_device <- function(device) {
  if (device == "cpu") return("cpu")
  info <- .Call(C_hb_cuda_info)
  if (device == "auto") return(if (isTRUE(info$available)) "cuda" else "cpu")
  if (!isTRUE(info$built)) {
    .hb_abort("`device` = \"cuda\" but histboost was installed without its CUDA learner (no ",
              "working nvcc was found): reinstall it where the CUDA toolkit is (set NVCC or CUDA_HOME if ",
              "nvcc is not on the PATH), or use device = \"cpu\".", kind = "device")
  }
  if (!isTRUE(info$available)) {
    .hb_abort("`device` = \"cuda\" but no GPU can be used: ", info$status,
              ". Use device = \"cpu\", or device = \"auto\" to use a GPU only when there is one.", kind = "device")
  }
  "cuda"
}

# The one message of device = "auto": which device it chose, and why
# (cpu_only: the options that kept it off a usable GPU).
.hb_device_say <- function(device, cpu_only = character()) {
  info <- .Call(C_hb_cuda_info)
  if (device == "cuda") {
    message("device = \"auto\" chose the GPU: ", info$name %||% "an NVIDIA GPU", ".")
  } else if (length(cpu_only) && isTRUE(info$available)) {
    message("device = \"auto\" chose the CPU: ", .hb_and(cpu_only), " train", if (length(cpu_only) == 1L) "s",
            " on the CPU only (", .hb_cpu_only_why(cpu_only), ").")
  } else {
    message("device = \"auto\" chose the CPU: ", sub("[.]$", "", info$status %||% "no usable GPU"), ".")
  }
}

# The GPU histogram of a dataset's rows, for tests and the benchmark.
# quant_bits > 0: g and h are quantized levels, summed by the quantized kernel.
.hb_cuda_hist <- function(dataset, g, h, rows = NULL, mode = 0L, smem_limit = 0L, reps = 0L, quant_bits = 0L) {
  .hb_hook_call("C_hb_cuda_hist_check", dataset$ptr, if (is.null(rows)) NULL else as.integer(rows),
                as.double(g), as.double(h), as.integer(quant_bits), as.integer(mode), as.integer(smem_limit),
                as.integer(reps))
}

# Device-to-device copy bandwidth of the GPU (GB/s, bytes read plus written).
.hb_cuda_copy_bandwidth <- function(bytes = 2^30, reps = 20L) {
  .hb_hook_call("C_hb_cuda_copy_bandwidth", as.double(bytes), as.integer(reps))
}
