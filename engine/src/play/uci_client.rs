//! The client side of the UCI protocol: an external engine as a [`Player`].
//! One child process per player, reused across games (`ucinewgame` between
//! games), every answer awaited with a timeout so that a hung engine is
//! detected. A failed engine (crash, hang, illegal move) is dropped, which
//! kills the process; [`UciPlayer::restart`] (or a new [`UciPlayer::start`])
//! launches a fresh one.
//!
//! Each engine runs in a process group of its own, so that a terminal's
//! Ctrl-C (sent to the whole foreground group) reaches the tool, which stops
//! tidily and then ends its engines, and not the engines themselves, whose
//! death mid-game would otherwise be recorded as a crash. An engine whose
//! tool is killed outright sees its input close and exits (every UCI engine
//! the project plays against does).
//!
//! The engine's standard output is read by a helper thread that forwards
//! lines over a channel; waiting on the channel with a deadline is the hang
//! detection (a child that closes its output is a crash). The engine only
//! chooses moves: the game's end is judged by [`crate::play::game`]. Searches
//! under a clock or a movetime may take that long on top of the timeout.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use shakmaty::Position;

use crate::chess::excerpt::excerpt;
use crate::chess::position::{fen_of, uci_of};
use crate::play::game::Choice;
use crate::play::game::{GameRecord, SearchBudget};
use crate::play::player::{Player, PlayerError};
use crate::search::MATE_SCORE;

/// Sent before every `ucinewgame` and `position`: an engine may print
/// `bestmove` slightly before its search thread is done (ours does), and
/// then ignore a `go` or `ucinewgame` that arrives too fast; `stop` makes
/// it finish the previous search first, and is ignored by an idle engine.
const FINISH_PREVIOUS_SEARCH: &str = "stop";

/// How an external engine is started and configured.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EngineSpec {
    /// The command line (split on whitespace: program, then arguments).
    pub command: String,
    /// `setoption` pairs, sent in order after `uci`.
    pub options: Vec<(String, String)>,
    /// Longest wait for any answer (added to the movetime budget for `go`).
    pub timeout: Duration,
}

impl EngineSpec {
    /// A short stable description for the run identity.
    pub fn describe(&self) -> String {
        let options: Vec<String> = self
            .options
            .iter()
            .map(|(n, v)| format!("{n}={v}"))
            .collect();
        format!("engine={:?} options=[{}]", self.command, options.join(","))
    }
}

/// An engine's `spin` option as its `uci` answer declares it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpinOption {
    /// The option name (may contain spaces).
    pub name: String,
    /// Default value.
    pub default: i32,
    /// Smallest value.
    pub min: i32,
    /// Largest value.
    pub max: i32,
}

impl SpinOption {
    /// Parses `option name NAME type spin default D min A max B` (the words
    /// after `type spin` in any order); `None` for other lines and types.
    pub fn parse(line: &str) -> Option<SpinOption> {
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.first() != Some(&"option") || words.get(1) != Some(&"name") {
            return None;
        }
        let type_at = words.iter().position(|w| *w == "type")?;
        if words.get(type_at + 1) != Some(&"spin") || type_at < 3 {
            return None;
        }
        let value = |key: &str| -> Option<i32> {
            let at = words[type_at..].iter().position(|w| *w == key)?;
            words.get(type_at + at + 1)?.parse().ok()
        };
        Some(SpinOption {
            name: words[2..type_at].join(" "),
            default: value("default")?,
            min: value("min")?,
            max: value("max")?,
        })
    }
}

/// A running engine process.
struct Process {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
}

impl Process {
    fn send(&mut self, line: &str) -> Result<(), PlayerError> {
        writeln!(self.stdin, "{line}")
            .and_then(|()| self.stdin.flush())
            .map_err(|e| PlayerError::Io(format!("writing {line:?}: {e}")))
    }

    /// Reads lines until one satisfies `done`, calling `on_line` for each.
    fn wait_for(
        &mut self,
        what: &'static str,
        timeout: Duration,
        mut on_line: impl FnMut(&str) -> bool,
    ) -> Result<(), PlayerError> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    if on_line(&line) {
                        return Ok(());
                    }
                }
                Err(RecvTimeoutError::Timeout) => return Err(PlayerError::Timeout(timeout, what)),
                Err(RecvTimeoutError::Disconnected) => return Err(PlayerError::Exited(what)),
            }
        }
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = writeln!(self.stdin, "quit");
        let _ = self.stdin.flush();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An external UCI engine playing both sides.
pub struct UciPlayer {
    spec: EngineSpec,
    process: Option<Process>,
    spin_options: Vec<SpinOption>,
}

impl UciPlayer {
    /// Starts the engine and completes the UCI handshake.
    ///
    /// # Errors
    /// When the engine cannot be started or does not answer `uci`/`isready`.
    pub fn start(spec: EngineSpec) -> Result<Self, PlayerError> {
        let mut player = UciPlayer {
            spec,
            process: None,
            spin_options: Vec::new(),
        };
        player.launch()?;
        Ok(player)
    }

    /// Kills the running engine, if any, and starts a new one.
    ///
    /// # Errors
    /// As [`UciPlayer::start`].
    pub fn restart(&mut self) -> Result<(), PlayerError> {
        self.launch()
    }

    /// How this engine is started.
    pub fn spec(&self) -> &EngineSpec {
        &self.spec
    }

    /// The `spin` options the engine declared in its last handshake.
    pub fn spin_options(&self) -> &[SpinOption] {
        &self.spin_options
    }

    fn launch(&mut self) -> Result<(), PlayerError> {
        self.process = None;
        let mut words = self.spec.command.split_whitespace();
        let program = words
            .next()
            .ok_or_else(|| PlayerError::Io("empty engine command".into()))?;
        let mut child = Command::new(program)
            .args(words)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .map_err(|e| PlayerError::Io(format!("starting {:?}: {e}", self.spec.command)))?;
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        let (sender, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        let mut process = Process {
            child,
            stdin,
            lines,
        };
        let timeout = self.spec.timeout;
        process.send("uci")?;
        let mut spins = Vec::new();
        process.wait_for("uciok", timeout, |l| {
            spins.extend(SpinOption::parse(l));
            l.trim() == "uciok"
        })?;
        self.spin_options = spins;
        for (name, value) in &self.spec.options {
            process.send(&format!("setoption name {name} value {value}"))?;
        }
        process.send("isready")?;
        process.wait_for("readyok", timeout, |l| l.trim() == "readyok")?;
        self.process = Some(process);
        Ok(())
    }

    fn process(&mut self) -> Result<&mut Process, PlayerError> {
        self.process
            .as_mut()
            .ok_or(PlayerError::Exited("a restarted engine"))
    }
}

/// Parses the score of an `info` line into the engine library's convention
/// (centipawns, mate as `±(MATE_SCORE - plies)`).
fn info_score(line: &str) -> Option<i32> {
    let mut words = line.split_whitespace();
    while let Some(word) = words.next() {
        if word == "score" {
            let kind = words.next()?;
            let value: i32 = words.next()?.parse().ok()?;
            return match kind {
                "cp" => Some(value),
                "mate" if value > 0 => Some(MATE_SCORE - (2 * value - 1)),
                "mate" => Some(-(MATE_SCORE - 2 * -value)),
                _ => None,
            };
        }
    }
    None
}

/// The number after `key` in an `info` line (`depth`, `nodes`, …).
fn info_value(line: &str, key: &str) -> Option<u32> {
    let mut words = line.split_whitespace();
    words.find(|w| *w == key)?;
    words.next()?.parse().ok()
}

impl Player for UciPlayer {
    fn new_game(&mut self) -> Result<(), PlayerError> {
        let timeout = self.spec.timeout;
        let process = self.process()?;
        process.send(FINISH_PREVIOUS_SEARCH)?;
        process.send("ucinewgame")?;
        process.send("isready")?;
        process.wait_for("readyok", timeout, |l| l.trim() == "readyok")
    }

    fn choose_move(
        &mut self,
        game: &GameRecord,
        budget: SearchBudget,
    ) -> Result<Choice, PlayerError> {
        let timeout = self.spec.timeout + budget.thinking_allowance(game.position.turn());
        let mut command = format!("position fen {}", fen_of(&game.start));
        if !game.moves.is_empty() {
            command.push_str(" moves");
            for m in &game.moves {
                command.push(' ');
                command.push_str(&uci_of(m));
            }
        }
        let process = self.process()?;
        process.send(FINISH_PREVIOUS_SEARCH)?;
        process.send(&command)?;
        process.send(&budget.uci_go())?;
        let (mut score, mut depth) = (None, None);
        let mut best = None;
        process.wait_for("bestmove", timeout, |line| {
            if line.starts_with("info") {
                // The last line with a score describes the move played
                // (bound lines of aspiration failures included, as
                // fastchess and cutechess do).
                if let Some(s) = info_score(line) {
                    score = Some(s);
                    depth = info_value(line, "depth");
                }
                false
            } else if let Some(rest) = line.strip_prefix("bestmove") {
                best = rest.split_whitespace().next().map(str::to_string);
                true
            } else {
                false
            }
        })?;
        let text = best.ok_or_else(|| PlayerError::Protocol("empty bestmove".into()))?;
        let parsed: shakmaty::uci::UciMove = text.parse().map_err(|_| {
            PlayerError::Protocol(format!(
                "{:?} is not a move in UCI notation",
                excerpt(&text)
            ))
        })?;
        let best_move = parsed.to_move(&game.position).map_err(|_| {
            PlayerError::IllegalMove(format!(
                "{} is not legal in {}",
                excerpt(&text),
                fen_of(&game.position)
            ))
        })?;
        Ok(Choice {
            best_move,
            score,
            depth,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spin_options_from_uci_lines() {
        let spin =
            SpinOption::parse("option name Move Overhead type spin default 30 min 0 max 5000");
        assert_eq!(
            spin,
            Some(SpinOption {
                name: "Move Overhead".into(),
                default: 30,
                min: 0,
                max: 5000
            })
        );
        assert_eq!(
            SpinOption::parse("option name x type spin min -5 max 5 default -1").map(|o| o.min),
            Some(-5)
        );
        assert_eq!(
            SpinOption::parse("option name OwnBook type check default false"),
            None
        );
        assert_eq!(
            SpinOption::parse("option name x type spin default y min 0 max 1"),
            None
        );
        assert_eq!(SpinOption::parse("id name x"), None);
    }

    #[test]
    fn scores_from_info_lines() {
        assert_eq!(info_score("info depth 3 score cp -25 nodes 10"), Some(-25));
        assert_eq!(
            info_score("info score mate 1 pv e2e4"),
            Some(MATE_SCORE - 1)
        );
        assert_eq!(info_score("info score mate -2"), Some(-(MATE_SCORE - 4)));
        assert_eq!(info_score("info string hello"), None);
        let line = "info depth 12 seldepth 20 score cp 31 nodes 5000 pv e2e4";
        assert_eq!(info_value(line, "depth"), Some(12));
        assert_eq!(info_value(line, "nodes"), Some(5000));
        assert_eq!(info_value("info score cp 3", "depth"), None);
        assert_eq!(info_value("info depth x", "depth"), None);
    }
}
