//! The UCI protocol front end: parses commands, keeps the game position and
//! the options, and runs searches on a separate thread so that `stop` and
//! `isready` are answered while searching.
//!
//! Invariants: no input line can make the session panic — malformed or
//! unknown input is ignored with an `info string` saying why; an illegal
//! move in `position … moves` is reported and the position is left as it was
//! before that move; every `go` is answered by exactly one `bestmove`, which
//! is legal (or `0000` when the position has no legal move). A `position`
//! command that was rejected (a bad FEN, an illegal move) is never searched
//! past: until the next accepted `position` or `ucinewgame`, `go` answers
//! `bestmove 0000` with an `info string`, since any move would be for a
//! position the GUI did not ask about. The session owns its [`Searcher`]
//! except while a search thread borrows it.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use shakmaty::{Chess, Color, Move, Position};

use crate::chess::excerpt::{excerpt, excerpt_bytes};
use crate::chess::position::{key, parse_fen, play_uci, uci_of};
use crate::eval::Params;
use crate::formats::book::PolyglotBook;
use crate::formats::search_params_file;
use crate::search::timeman::{Clock, DEFAULT_MOVE_OVERHEAD};
use crate::search::tt::Bound;
use crate::search::{
    SEARCH_PARAMS, SearchInfo, SearchLimits, SearchParams, SearchResult, Searcher, mate_in_moves,
};

/// Engine name reported to `uci`.
pub const ENGINE_NAME: &str = concat!("texel-toolchain engine ", env!("CARGO_PKG_VERSION"));
/// Author reported to `uci`.
pub const ENGINE_AUTHOR: &str = "The toolchain authors";
/// Default transposition table size in MB.
pub const DEFAULT_HASH_MB: usize = 16;
/// Largest accepted `Hash` in MB.
pub const MAX_HASH_MB: usize = 16_384;
/// Largest accepted `Threads`.
pub const MAX_THREADS: usize = 256;
/// Largest accepted `Move Overhead` in ms.
pub const MAX_MOVE_OVERHEAD_MS: u64 = 5_000;
/// Nodes searched by a `go` without any usable limit (a fraction of a
/// second; `go infinite` searches until `stop`).
pub const DEFAULT_GO_NODES: u64 = 1_000_000;
/// Longest input line read; the rest of a longer line is dropped and the
/// line ignored.
pub const MAX_LINE_BYTES: usize = 1 << 20;
/// How often a finished infinite search looks at the stop flag when not
/// woken (`stop` and `ponderhit` wake it at once).
const INFINITE_POLL: Duration = Duration::from_millis(50);

/// Where the session writes its replies (shared with the search thread).
pub type Output = Arc<Mutex<Box<dyn Write + Send>>>;

/// Writes one protocol line and flushes it.
fn send(out: &Output, line: &str) {
    // A poisoned lock or a closed pipe cannot be reported anywhere; the
    // GUI is gone, so the line is dropped.
    if let Ok(mut w) = out.lock() {
        let _ = writeln!(w, "{line}");
        let _ = w.flush();
    }
}

/// Whether the session goes on after a command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    /// Keep reading commands.
    Continue,
    /// `quit` was received.
    Quit,
}

/// The UCI options and their current values.
#[derive(Clone, Debug)]
pub struct EngineOptions {
    /// `Hash`, MB.
    pub hash_mb: usize,
    /// `Threads`.
    pub threads: usize,
    /// `Move Overhead`.
    pub move_overhead: Duration,
    /// `OwnBook`: play from the opening book when it has a move.
    pub own_book: bool,
    /// `BookFile`: the Polyglot book.
    pub book_file: Option<PathBuf>,
    /// `ParamsFile`: evaluation weights to load.
    pub params_file: Option<PathBuf>,
    /// The search parameters (one spin option each).
    pub search_params: SearchParams,
    /// `SearchParamsFile`: search parameters to load.
    pub search_params_file: Option<PathBuf>,
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            hash_mb: DEFAULT_HASH_MB,
            threads: 1,
            move_overhead: DEFAULT_MOVE_OVERHEAD,
            own_book: false,
            book_file: None,
            params_file: None,
            search_params: SearchParams::default(),
            search_params_file: None,
        }
    }
}

/// A running search thread and what it hands back.
struct RunningSearch {
    handle: JoinHandle<Searcher>,
    bestmove_sent: Arc<AtomicBool>,
}

/// One UCI session (see the module documentation).
pub struct UciSession {
    out: Output,
    position: Chess,
    /// Keys of the positions before `position` in the game, oldest first.
    history_keys: Vec<u64>,
    /// Why the last `position` command was rejected, if it was: `go` then
    /// answers `bestmove 0000` instead of searching a position the GUI
    /// did not send.
    position_rejected: Option<String>,
    options: EngineOptions,
    searcher: Option<Searcher>,
    running: Option<RunningSearch>,
    stop: Arc<AtomicBool>,
    /// The opened `BookFile`, once used.
    book: Option<PolyglotBook>,
}

/// Reads one line (without its end) into `line`, keeping at most
/// [`MAX_LINE_BYTES`] of it (the rest is dropped, so a line without end
/// cannot exhaust memory). Returns whether the line was ended by a newline
/// (false at the end of the input) and its full length.
fn read_line(input: &mut impl BufRead, line: &mut Vec<u8>) -> std::io::Result<(bool, usize)> {
    line.clear();
    let mut length = 0;
    loop {
        let available = match input.fill_buf() {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            return Ok((false, length));
        }
        let (chunk, ended) = match available.iter().position(|&b| b == b'\n') {
            Some(i) => (&available[..i], true),
            None => (available, false),
        };
        let room = MAX_LINE_BYTES.saturating_sub(line.len());
        line.extend_from_slice(&chunk[..chunk.len().min(room)]);
        length += chunk.len();
        let used = chunk.len() + usize::from(ended);
        input.consume(used);
        if ended {
            return Ok((true, length));
        }
    }
}

/// The text of a line read by [`read_line`] (`length` bytes long in
/// full), or why it is ignored.
fn line_text(line: &[u8], length: usize) -> Result<&str, String> {
    if length > MAX_LINE_BYTES {
        return Err(format!(
            "input line of {length} bytes ignored (the longest read is {MAX_LINE_BYTES})"
        ));
    }
    std::str::from_utf8(line).map_err(|e| {
        format!(
            "input line ignored: not UTF-8 (byte {}): {}",
            e.valid_up_to() + 1,
            excerpt_bytes(line)
        )
    })
}

/// The words of `go` that start a new argument.
const GO_KEYWORDS: [&str; 12] = [
    "searchmoves",
    "ponder",
    "wtime",
    "btime",
    "winc",
    "binc",
    "movestogo",
    "depth",
    "nodes",
    "mate",
    "movetime",
    "infinite",
];

/// Parses `go` arguments into limits and the `infinite` flag.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct GoCommand {
    wtime: Option<Duration>,
    btime: Option<Duration>,
    winc: Option<Duration>,
    binc: Option<Duration>,
    movestogo: Option<u32>,
    movetime: Option<Duration>,
    depth: Option<u32>,
    nodes: Option<u64>,
    searchmoves: Vec<Move>,
    infinite: bool,
}

impl GoCommand {
    /// Whether any limit bounds the search.
    fn has_limit(&self, turn: Color) -> bool {
        let clock = match turn {
            Color::White => self.wtime,
            Color::Black => self.btime,
        };
        self.depth.is_some() || self.nodes.is_some() || self.movetime.is_some() || clock.is_some()
    }
}

/// A time in milliseconds; some GUIs send negative times when the clock is
/// about to run out (taken as 0).
fn millis(value: &str) -> Result<Duration, String> {
    value
        .parse::<i64>()
        .map(|v| Duration::from_millis(v.max(0) as u64))
        .map_err(|_| "expected a whole number of milliseconds".to_string())
}

/// A count that must be at least `min`.
fn count<T: std::str::FromStr + PartialOrd + std::fmt::Display>(
    value: &str,
    min: T,
) -> Result<T, String> {
    match value.parse::<T>() {
        Ok(v) if v >= min => Ok(v),
        _ => Err(format!("expected a whole number from {min}")),
    }
}

/// A score as UCI writes it: `cp N` or `mate N` (moves).
fn score_text(score: i32) -> String {
    match mate_in_moves(score) {
        Some(m) => format!("mate {m}"),
        None => format!("cp {score}"),
    }
}

/// Formats a search report as a UCI `info` line.
pub fn info_line(info: &SearchInfo) -> String {
    let score = score_text(info.score);
    let bound = match info.bound {
        Bound::Exact => "",
        Bound::Lower => " lowerbound",
        Bound::Upper => " upperbound",
    };
    let ms = info.elapsed.as_millis() as u64;
    let nps = info.nodes * 1000 / ms.max(1);
    let pv: Vec<String> = info.pv.iter().map(uci_of).collect();
    format!(
        "info depth {} seldepth {} score {score}{bound} nodes {} nps {nps} time {ms} hashfull {} pv {}",
        info.depth,
        info.seldepth,
        info.nodes,
        info.hashfull,
        pv.join(" ")
    )
}

/// The `info` line sent just before `bestmove`: the score and line of the
/// move played. A node or time limit can stop the search inside an
/// iteration whose best move was already found; the iteration reports
/// above then show an older score, and clients that record the score of
/// the move (self-play data, adjudication) need this one.
fn final_info_line(result: &SearchResult, elapsed: Duration) -> String {
    let ms = elapsed.as_millis() as u64;
    let pv: Vec<String> = result.pv.iter().map(uci_of).collect();
    format!(
        "info depth {} seldepth {} score {} nodes {} nps {} time {ms} pv {}",
        result.depth,
        result.seldepth,
        score_text(result.score),
        result.nodes,
        result.nodes * 1000 / ms.max(1),
        pv.join(" ")
    )
}

fn bestmove_line(result: &SearchResult) -> String {
    match result.best_move {
        Some(m) => match result.pv.get(1) {
            Some(ponder) => format!("bestmove {} ponder {}", uci_of(&m), uci_of(ponder)),
            None => format!("bestmove {}", uci_of(&m)),
        },
        None => "bestmove 0000".to_string(),
    }
}

/// The evaluation weights in `path` (see [`crate::formats::params_file`]).
fn load_params(path: &Path) -> Result<Params, String> {
    crate::formats::params_file::read_file(path)
        .map(|loaded| loaded.params)
        .map_err(|e| e.to_string())
}

/// The opening book's move for `pos`, if `OwnBook` is on and the book has
/// one: chosen at random in proportion to the weights, never a weight-0
/// move. The book is opened on first use and kept until `BookFile` changes.
fn book_move(
    options: &EngineOptions,
    book: &mut Option<PolyglotBook>,
    pos: &Chess,
) -> Result<Option<Move>, String> {
    if !options.own_book {
        return Ok(None);
    }
    let Some(path) = &options.book_file else {
        return Err("OwnBook is on but no BookFile is set".to_string());
    };
    if book.is_none() {
        *book = Some(PolyglotBook::open(path).map_err(|e| format!("book not used: {e}"))?);
    }
    Ok(book
        .as_ref()
        .and_then(|b| b.choose_move(pos, &mut rand::rng())))
}

impl UciSession {
    /// A session writing its replies to `out`.
    pub fn new(out: impl Write + Send + 'static) -> Self {
        Self::with_hash_mb(out, DEFAULT_HASH_MB)
    }

    /// A session whose transposition table starts at `hash_mb` MB (clamped
    /// to `1..=MAX_HASH_MB`), as after `setoption name Hash value hash_mb`
    /// (the fuzz target's sessions use 1 MB: the protocol is under test,
    /// and the default table would cost more than the rest of a session).
    pub fn with_hash_mb(out: impl Write + Send + 'static, hash_mb: usize) -> Self {
        let options = EngineOptions {
            hash_mb: hash_mb.clamp(1, MAX_HASH_MB),
            ..EngineOptions::default()
        };
        let searcher = Searcher::new(Arc::new(Params::defaults()), options.hash_mb);
        let stop = searcher.stop_flag();
        let boxed: Box<dyn Write + Send> = Box::new(out);
        UciSession {
            out: Arc::new(Mutex::new(boxed)),
            position: Chess::default(),
            history_keys: Vec::new(),
            position_rejected: None,
            options,
            searcher: Some(searcher),
            running: None,
            stop,
            book: None,
        }
    }

    /// Reads commands from `input` until `quit` or end of input (then any
    /// running search is stopped and joined).
    ///
    /// # Errors
    /// An I/O error reading `input`.
    pub fn run(&mut self, mut input: impl BufRead) -> std::io::Result<()> {
        let mut line = Vec::new();
        loop {
            let (complete, length) = read_line(&mut input, &mut line)?;
            if length == 0 && !complete {
                break;
            }
            let flow = match line_text(&line, length) {
                Ok(text) => self.handle_line(text),
                Err(reason) => {
                    self.info_string(&reason);
                    Flow::Continue
                }
            };
            if flow == Flow::Quit {
                return Ok(());
            }
            if !complete {
                break;
            }
        }
        self.handle_line("quit");
        Ok(())
    }

    /// The current game position.
    pub fn position(&self) -> &Chess {
        &self.position
    }

    /// Keys of the positions before the current one in the game.
    pub fn history_keys(&self) -> &[u64] {
        &self.history_keys
    }

    /// The current options.
    pub fn options(&self) -> &EngineOptions {
        &self.options
    }

    fn info_string(&self, text: &str) {
        send(&self.out, &format!("info string {text}"));
    }

    /// Handles one input line.
    pub fn handle_line(&mut self, line: &str) -> Flow {
        let tokens: Vec<&str> = line.split_whitespace().collect();
        let Some((&command, args)) = tokens.split_first() else {
            return Flow::Continue;
        };
        match command {
            "uci" => self.cmd_uci(),
            "isready" => send(&self.out, "readyok"),
            "ucinewgame" => {
                // Ignored as a whole during a search: the position the GUI
                // set up stays for the next `go`.
                if let Some(s) = self.idle_searcher("ucinewgame") {
                    s.new_game();
                    self.set_start_position();
                }
            }
            "setoption" => self.cmd_setoption(args),
            "position" => self.cmd_position(args),
            "go" => self.cmd_go(args),
            "stop" => self.stop_search(),
            // Pondering is not advertised; a `go ponder` runs as infinite, so
            // a ponderhit ends it with the move found so far.
            "ponderhit" => self.signal_stop(),
            "debug" | "register" => {}
            "quit" => {
                self.stop_search();
                return Flow::Quit;
            }
            other => self.info_string(&format!("unknown command {:?} ignored", excerpt(other))),
        }
        Flow::Continue
    }

    fn cmd_uci(&self) {
        let lines = [
            format!("id name {ENGINE_NAME}"),
            format!("id author {ENGINE_AUTHOR}"),
            format!("option name Hash type spin default {DEFAULT_HASH_MB} min 1 max {MAX_HASH_MB}"),
            format!("option name Threads type spin default 1 min 1 max {MAX_THREADS}"),
            format!(
                "option name Move Overhead type spin default {} min 0 max {MAX_MOVE_OVERHEAD_MS}",
                DEFAULT_MOVE_OVERHEAD.as_millis()
            ),
            "option name OwnBook type check default false".to_string(),
            "option name BookFile type string default <empty>".to_string(),
            "option name ParamsFile type string default <empty>".to_string(),
            "option name SearchParamsFile type string default <empty>".to_string(),
        ];
        for l in lines.into_iter().chain(search_option_lines()) {
            send(&self.out, &l);
        }
        send(&self.out, "uciok");
    }

    /// The searcher if no search is running (joining a finished one);
    /// otherwise reports that `what` is ignored.
    fn idle_searcher(&mut self, what: &str) -> Option<&mut Searcher> {
        if let Some(r) = &self.running
            && !r.bestmove_sent.load(Ordering::Acquire)
            && !r.handle.is_finished()
        {
            self.info_string(&format!("{what} ignored: a search is running"));
            return None;
        }
        self.join_search();
        self.searcher.as_mut()
    }

    fn join_search(&mut self) {
        if let Some(r) = self.running.take() {
            match r.handle.join() {
                Ok(searcher) => self.searcher = Some(searcher),
                Err(_) => {
                    // The search thread panicked: start afresh so the
                    // session stays usable.
                    self.info_string("search thread failed; tables reset");
                    self.searcher = Some(self.fresh_searcher());
                }
            }
        }
    }

    fn fresh_searcher(&mut self) -> Searcher {
        let mut s = Searcher::new(Arc::new(Params::defaults()), self.options.hash_mb);
        s.set_threads(self.options.threads);
        s.set_search_params(self.options.search_params);
        self.stop = s.stop_flag();
        s
    }

    /// Sets the stop flag and wakes a finished infinite search waiting
    /// for it.
    fn signal_stop(&self) {
        self.stop.store(true, Ordering::Release);
        if let Some(r) = &self.running {
            r.handle.thread().unpark();
        }
    }

    fn stop_search(&mut self) {
        self.signal_stop();
        self.join_search();
    }

    fn set_start_position(&mut self) {
        self.position = Chess::default();
        self.history_keys.clear();
        self.position_rejected = None;
    }

    /// The value of a spin option if it is a whole number in `min..=max`;
    /// otherwise reports it ignored.
    fn spin_value(&self, name: &str, value: &str, min: u64, max: u64) -> Option<u64> {
        match value.parse::<u64>() {
            Ok(v) if (min..=max).contains(&v) => Some(v),
            _ => {
                self.info_string(&format!(
                    "{name} must be {min}..={max}; {:?} ignored",
                    excerpt(value)
                ));
                None
            }
        }
    }

    fn cmd_setoption(&mut self, args: &[&str]) {
        // setoption name <name words> [value <value words>]
        if args.first() != Some(&"name") {
            self.info_string("setoption needs 'name <option>'; ignored");
            return;
        }
        let value_at = args.iter().position(|&t| t == "value");
        let name = args[1..value_at.unwrap_or(args.len())].join(" ");
        let value = value_at
            .map(|i| args[i + 1..].join(" "))
            .unwrap_or_default();
        match name.to_ascii_lowercase().as_str() {
            "hash" => {
                let Some(mb) = self.spin_value("Hash", &value, 1, MAX_HASH_MB as u64) else {
                    return;
                };
                let mb = mb as usize;
                if let Some(s) = self.idle_searcher("setoption Hash") {
                    // The table is allocated zeroed by the operating system
                    // page by page as the search touches it, so even the
                    // largest size is set at once.
                    match s.set_hash_megabytes(mb) {
                        Ok(()) => self.options.hash_mb = mb,
                        Err(e) => self.info_string(&format!("{e}; keeping the old size")),
                    }
                }
            }
            "threads" => {
                let Some(n) = self.spin_value("Threads", &value, 1, MAX_THREADS as u64) else {
                    return;
                };
                if let Some(s) = self.idle_searcher("setoption Threads") {
                    s.set_threads(n as usize);
                    self.options.threads = n as usize;
                }
            }
            "move overhead" => {
                if let Some(ms) = self.spin_value("Move Overhead", &value, 0, MAX_MOVE_OVERHEAD_MS)
                {
                    self.options.move_overhead = Duration::from_millis(ms);
                }
            }
            "ownbook" => match value.to_ascii_lowercase().as_str() {
                "true" => self.options.own_book = true,
                "false" => self.options.own_book = false,
                _ => self.info_string(&format!(
                    "OwnBook must be true or false; {:?} ignored",
                    excerpt(&value)
                )),
            },
            "bookfile" => {
                self.options.book_file = path_option(&value);
                self.book = None;
            }
            "paramsfile" => {
                let path = path_option(&value);
                self.options.params_file = path.clone();
                let params = match &path {
                    None => Ok(Params::defaults()),
                    Some(p) => load_params(p),
                };
                match params {
                    Ok(params) => {
                        if let Some(s) = self.idle_searcher("setoption ParamsFile") {
                            s.set_params(Arc::new(params));
                        }
                    }
                    Err(e) => {
                        self.info_string(&format!("ParamsFile: {e}; keeping current weights"))
                    }
                }
            }
            _ => self.set_search_option(&name, &value),
        }
    }

    /// `SearchParamsFile` and the search parameters' spin options (see
    /// [`crate::search::params`]); any other name is reported unknown.
    fn set_search_option(&mut self, name: &str, value: &str) {
        let params = if name.eq_ignore_ascii_case("SearchParamsFile") {
            let path = path_option(value);
            let loaded = match &path {
                None => Ok(SearchParams::default()),
                Some(p) => search_params_file::read_file(p)
                    .map(|l| l.params)
                    .map_err(|e| e.to_string()),
            };
            match loaded {
                Ok(params) => {
                    self.options.search_params_file = path;
                    params
                }
                Err(e) => {
                    return self.info_string(&format!(
                        "SearchParamsFile: {e}; keeping the current search parameters"
                    ));
                }
            }
        } else if let Some(i) = SearchParams::index_of(name) {
            let spec = &SEARCH_PARAMS[i];
            match value.trim().parse::<i32>() {
                Ok(v) if spec.allows(v) => {
                    let mut params = self.options.search_params;
                    params.set(i, v);
                    params
                }
                _ => {
                    return self.info_string(&format!(
                        "{} must be {}..={}; {value:?} ignored",
                        spec.name, spec.min, spec.max
                    ));
                }
            }
        } else {
            return self.info_string(&format!("unknown option {:?} ignored", excerpt(name)));
        };
        if let Some(s) = self.idle_searcher("setoption") {
            s.set_search_params(params);
            self.options.search_params = params;
        }
    }

    fn cmd_position(&mut self, args: &[&str]) {
        let moves_at = args.iter().position(|&t| t == "moves");
        let setup = &args[..moves_at.unwrap_or(args.len())];
        let start = match setup.split_first() {
            Some((&"startpos", [])) => Chess::default(),
            Some((&"fen", fen)) if !fen.is_empty() => match parse_fen(&fen.join(" ")) {
                Ok(pos) => pos,
                Err(e) => {
                    self.reject_position(format!("position ignored: {e}"));
                    return;
                }
            },
            _ => {
                self.reject_position(
                    "position needs 'startpos' or 'fen <FEN>'; ignored".to_string(),
                );
                return;
            }
        };
        let mut pos = start;
        let mut keys = Vec::new();
        let mut rejected = None;
        if let Some(i) = moves_at {
            for text in &args[i + 1..] {
                match play_uci(&pos, text) {
                    Ok((next, _)) => {
                        keys.push(key(&pos));
                        pos = next;
                    }
                    Err(e) => {
                        rejected = Some(format!(
                            "illegal move in position command: {e}; remaining moves ignored"
                        ));
                        break;
                    }
                }
            }
        }
        self.position = pos;
        self.history_keys = keys;
        self.position_rejected = None;
        if let Some(reason) = rejected {
            self.reject_position(reason);
        }
    }

    /// Reports why a `position` command was rejected and remembers it, so
    /// that the next `go` does not search a position the GUI did not send.
    fn reject_position(&mut self, reason: String) {
        self.info_string(&reason);
        self.position_rejected = Some(reason);
    }

    /// Parses the arguments of `go`. A bad value is reported and ignored,
    /// and never taken for the next keyword; an unknown word is reported
    /// and skipped; the rest of the line is still parsed.
    fn parse_go(&self, args: &[&str]) -> GoCommand {
        let mut go = GoCommand::default();
        let mut i = 0;
        while i < args.len() {
            let name = args[i];
            i += 1;
            match name {
                "infinite" | "ponder" => {
                    go.infinite = true;
                    continue;
                }
                "searchmoves" => {
                    while let Some(&text) = args.get(i).filter(|t| !GO_KEYWORDS.contains(t)) {
                        i += 1;
                        match play_uci(&self.position, text) {
                            Ok((_, m)) => go.searchmoves.push(m),
                            Err(e) => self.info_string(&format!("go searchmoves: {e}; ignored")),
                        }
                    }
                    continue;
                }
                _ if !GO_KEYWORDS.contains(&name) => {
                    self.info_string(&format!("go: unknown word {:?} ignored", excerpt(name)));
                    continue;
                }
                _ => {}
            }
            let Some(&value) = args.get(i).filter(|t| !GO_KEYWORDS.contains(t)) else {
                self.info_string(&format!("go: {name} needs a value; ignored"));
                continue;
            };
            i += 1;
            let parsed = match name {
                "wtime" => millis(value).map(|v| go.wtime = Some(v)),
                "btime" => millis(value).map(|v| go.btime = Some(v)),
                "winc" => millis(value).map(|v| go.winc = Some(v)),
                "binc" => millis(value).map(|v| go.binc = Some(v)),
                "movetime" => millis(value).map(|v| go.movetime = Some(v)),
                "movestogo" => count(value, 1u32).map(|v| go.movestogo = Some(v)),
                "depth" => count(value, 1u32).map(|v| go.depth = Some(v)),
                "nodes" => count(value, 1u64).map(|v| go.nodes = Some(v)),
                // A mate in n moves is found within 2n - 1 plies.
                "mate" => count(value, 1u32).map(|v| go.depth = Some(v.saturating_mul(2) - 1)),
                _ => unreachable!("every keyword with a value is handled"),
            };
            if let Err(expected) = parsed {
                self.info_string(&format!(
                    "go: {name} {:?} ignored ({expected})",
                    excerpt(value)
                ));
            }
        }
        go
    }

    fn cmd_go(&mut self, args: &[&str]) {
        if self.idle_searcher("go").is_none() {
            return;
        }
        if let Some(reason) = &self.position_rejected {
            self.info_string(&format!(
                "go not searched: the last position command was rejected ({reason}); send a \
                 valid position"
            ));
            send(&self.out, "bestmove 0000");
            return;
        }
        let go = self.parse_go(args);
        let (time, inc) = match self.position.turn() {
            Color::White => (go.wtime, go.winc),
            Color::Black => (go.btime, go.binc),
        };
        let clock = time.map(|time_left| Clock {
            time_left,
            increment: inc.unwrap_or_default(),
            moves_to_go: go.movestogo,
        });
        // Only `go infinite` (or `ponder`) waits for `stop`; any other `go`
        // without a usable limit searches a bounded default.
        let wait_for_stop = go.infinite;
        let nodes = if wait_for_stop || go.has_limit(self.position.turn()) {
            go.nodes
        } else {
            self.info_string(&format!(
                "go without a limit: searching {DEFAULT_GO_NODES} nodes (go infinite searches \
                 until stop)"
            ));
            Some(DEFAULT_GO_NODES)
        };
        let limits = SearchLimits {
            depth: go.depth,
            nodes,
            movetime: go.movetime,
            clock: if go.infinite { None } else { clock },
            move_overhead: self.options.move_overhead,
            root_moves: go.searchmoves,
        };

        if !wait_for_stop {
            match book_move(&self.options, &mut self.book, &self.position) {
                Ok(Some(m)) => {
                    send(&self.out, &format!("bestmove {}", uci_of(&m)));
                    return;
                }
                Ok(None) => {}
                Err(e) => self.info_string(&e),
            }
        }

        let Some(mut searcher) = self.searcher.take() else {
            self.info_string("go ignored: no searcher available");
            return;
        };
        self.stop.store(false, Ordering::Release);
        let stop = self.stop.clone();
        let out = self.out.clone();
        let pos = self.position.clone();
        let keys = self.history_keys.clone();
        let bestmove_sent = Arc::new(AtomicBool::new(false));
        let sent = bestmove_sent.clone();
        let handle = std::thread::spawn(move || {
            let started = Instant::now();
            let result = searcher.search(&pos, &keys, &limits, |info| send(&out, &info_line(info)));
            if result.best_move.is_some() {
                send(&out, &final_info_line(&result, started.elapsed()));
            }
            while wait_for_stop && !stop.load(Ordering::Acquire) {
                std::thread::park_timeout(INFINITE_POLL);
            }
            // Flag first: the GUI may answer the bestmove with a new `go` at
            // once, and that `go` must find the search finished, not running.
            sent.store(true, Ordering::Release);
            send(&out, &bestmove_line(&result));
            searcher
        });
        self.running = Some(RunningSearch {
            handle,
            bestmove_sent,
        });
    }
}

/// The `option name … type spin …` lines of the search parameters.
fn search_option_lines() -> impl Iterator<Item = String> {
    SEARCH_PARAMS.iter().map(|p| {
        format!(
            "option name {} type spin default {} min {} max {}",
            p.name, p.default, p.min, p.max
        )
    })
}

fn path_option(value: &str) -> Option<PathBuf> {
    let v = value.trim();
    if v.is_empty() || v == "<empty>" {
        None
    } else {
        Some(PathBuf::from(v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_starts_with_the_hash_size_asked_for() {
        assert_eq!(
            UciSession::new(std::io::sink()).options().hash_mb,
            DEFAULT_HASH_MB
        );
        assert_eq!(
            UciSession::with_hash_mb(std::io::sink(), 1)
                .options()
                .hash_mb,
            1
        );
        assert_eq!(
            UciSession::with_hash_mb(std::io::sink(), 0)
                .options()
                .hash_mb,
            1
        );
        let mut session = UciSession::with_hash_mb(std::io::sink(), 1);
        session.handle_line("setoption name Hash value 2");
        assert_eq!(session.options().hash_mb, 2);
    }

    #[test]
    fn go_parsing_survives_garbage() {
        let s = UciSession::new(std::io::sink());
        let go = s.parse_go(&[
            "wtime", "-5", "btime", "x", "depth", "3", "bogus", "infinite",
        ]);
        assert_eq!(go.wtime, Some(Duration::ZERO));
        assert_eq!(go.btime, None);
        assert_eq!(go.depth, Some(3));
        assert!(go.infinite);
    }
}
