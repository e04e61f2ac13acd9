//! How a tool's failure ends it: a reader that closed the pipe downstream
//! (`tool … | head`) is a quiet stop, not an error to report. The tools'
//! `main` functions ask [`is_broken_pipe`] before printing an error.

/// Whether `error`, or any error in its chain of causes, is a broken pipe.
pub fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
