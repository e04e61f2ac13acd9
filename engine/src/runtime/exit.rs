//! How a tool's output and failure end it: printing to standard output
//! returns an error instead of panicking ([`say!`](crate::say),
//! [`say_raw!`](crate::say_raw)), and a reader that closed the pipe
//! downstream (`tool … | head`) is a quiet stop, not an error to report:
//! the tools' `main` functions ask [`is_broken_pipe`] before printing an
//! error.

use std::io::Write;

use anyhow::Context;

/// Whether `error`, or any error in its chain of causes, is a broken pipe.
pub fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// Writes `args` to standard output, then a newline (`line`) or a flush;
/// the error of [`say!`](crate::say) and [`say_raw!`](crate::say_raw).
///
/// # Errors
/// When standard output cannot be written (a full disk, a closed pipe).
pub fn print_stdout(args: std::fmt::Arguments<'_>, line: bool) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_fmt(args)
        .and_then(|()| {
            if line {
                out.write_all(b"\n")
            } else {
                out.flush()
            }
        })
        .context("cannot write to standard output")
}

/// `println!` to standard output that returns an error (a full disk, a
/// closed pipe) instead of panicking.
#[macro_export]
macro_rules! say {
    () => {
        $crate::runtime::exit::print_stdout(format_args!(""), true)
    };
    ($($arg:tt)*) => {
        $crate::runtime::exit::print_stdout(format_args!($($arg)*), true)
    };
}

/// `print!` to standard output, as [`say!`](crate::say), flushed.
#[macro_export]
macro_rules! say_raw {
    ($($arg:tt)*) => {
        $crate::runtime::exit::print_stdout(format_args!($($arg)*), false)
    };
}
