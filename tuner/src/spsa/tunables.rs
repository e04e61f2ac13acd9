//! Which options an SPSA run tunes, and how: the engine's UCI `spin`
//! options, selected and overridden by `--tune` specifications and an
//! OpenBench input file.
//!
//! * `--tune NAME` tunes option NAME (ASCII case ignored) from its default
//!   over its whole range; `--tune NAME=START` starts elsewhere;
//!   `--tune NAME=START,MIN,MAX[,C_END[,R_END]]` also narrows the range and
//!   sets the schedule (see [`super::schedule`]).
//! * `--inputs FILE` reads OpenBench's SPSA input, one parameter per line:
//!   `NAME, int, START, MIN, MAX, C_END, R_END` (as `engine search-params
//!   --openbench` prints it).
//! * Without either, every spin option except the engine-management ones
//!   ([`MANAGEMENT_OPTIONS`]) is tuned from its default.
//!
//! `C_END` defaults to the step our engine declares for a search parameter
//! of that name and range, else to a twentieth of the range (OpenBench's
//! advice); `R_END` to `--r-end`. Every range must lie within the engine's
//! own, contain the start value and have `min < max`.

use std::path::Path;

use anyhow::{Context, Result, bail, ensure};
use engine::play::uci_client::SpinOption;
use engine::search::{SEARCH_PARAMS, SearchParams};

use super::schedule::Tunable;

/// Spin options that set up an engine rather than its play, never tuned
/// unless named.
pub const MANAGEMENT_OPTIONS: [&str; 13] = [
    "Hash",
    "Threads",
    "MultiPV",
    "Move Overhead",
    "Minimum Thinking Time",
    "Slow Mover",
    "nodestime",
    "UCI_Elo",
    "Skill Level",
    "SyzygyProbeDepth",
    "SyzygyProbeLimit",
    "Contempt",
    "Analysis Contempt",
];
/// A default `c_end` is this share of the range.
const RANGE_PER_C_END: f64 = 20.0;

/// A parameter as asked for on the command line or in an input file,
/// before it is checked against the engine.
#[derive(Clone, Debug, PartialEq)]
pub struct TuneSpec {
    /// The option name as written.
    pub name: String,
    /// Start value (default: the option's default).
    pub start: Option<f64>,
    /// Range (default: the option's).
    pub range: Option<(f64, f64)>,
    /// Final perturbation.
    pub c_end: Option<f64>,
    /// Final learning rate.
    pub r_end: Option<f64>,
}

fn number(text: &str, what: &str) -> Result<f64> {
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
        .with_context(|| format!("{what} {:?} is not a number", text.trim()))
}

impl std::str::FromStr for TuneSpec {
    type Err = anyhow::Error;

    /// Parses `NAME`, `NAME=START` or `NAME=START,MIN,MAX[,C_END[,R_END]]`.
    fn from_str(text: &str) -> Result<Self> {
        let (name, values) = match text.split_once('=') {
            Some((n, v)) => (n.trim(), Some(v)),
            None => (text.trim(), None),
        };
        ensure!(
            !name.is_empty() && !name.contains(','),
            "--tune {text:?}: expected NAME, NAME=START or NAME=START,MIN,MAX[,C_END[,R_END]]"
        );
        let mut spec = TuneSpec {
            name: name.to_string(),
            start: None,
            range: None,
            c_end: None,
            r_end: None,
        };
        if let Some(values) = values {
            let parts: Vec<&str> = values.split(',').collect();
            ensure!(
                matches!(parts.len(), 1 | 3..=5),
                "--tune {text:?}: expected NAME=START or NAME=START,MIN,MAX[,C_END[,R_END]]"
            );
            let v = |i: usize, what: &str| {
                number(parts[i], what).with_context(|| format!("--tune {text:?}"))
            };
            spec.start = Some(v(0, "START")?);
            if parts.len() >= 3 {
                spec.range = Some((v(1, "MIN")?, v(2, "MAX")?));
            }
            if parts.len() >= 4 {
                spec.c_end = Some(v(3, "C_END")?);
            }
            if parts.len() == 5 {
                spec.r_end = Some(v(4, "R_END")?);
            }
        }
        Ok(spec)
    }
}

/// Reads OpenBench's SPSA input (`NAME, int, START, MIN, MAX, C_END,
/// R_END` per line; blank lines and `#` comments skipped).
///
/// # Errors
/// When the file cannot be read or a line is malformed (with its number).
pub fn read_inputs(path: &Path) -> Result<Vec<TuneSpec>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let mut specs = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let content = line.trim();
        if content.is_empty() || content.starts_with('#') {
            continue;
        }
        let at = || format!("{}:{}", path.display(), i + 1);
        let parts: Vec<&str> = content.split(',').map(str::trim).collect();
        ensure!(
            parts.len() == 7,
            "{}: expected NAME, int, START, MIN, MAX, C_END, R_END, found {content:?}",
            at()
        );
        ensure!(
            parts[1] == "int",
            "{}: only int parameters can be tuned through UCI spin options, found {:?}",
            at(),
            parts[1]
        );
        let v = |i: usize, what: &str| number(parts[i], what).with_context(at);
        specs.push(TuneSpec {
            name: parts[0].to_string(),
            start: Some(v(2, "START")?),
            range: Some((v(3, "MIN")?, v(4, "MAX")?)),
            c_end: Some(v(5, "C_END")?),
            r_end: Some(v(6, "R_END")?),
        });
    }
    Ok(specs)
}

/// The `c_end` our engine declares for a search parameter `name` with this
/// range, if it is one of ours.
fn declared_step(name: &str, min: i32, max: i32) -> Option<f64> {
    let i = SearchParams::index_of(name)?;
    let spec = &SEARCH_PARAMS[i];
    (spec.min == min && spec.max == max).then_some(f64::from(spec.step))
}

/// The tunables of a run on an engine with `options`.
///
/// # Errors
/// A named option the engine lacks (or that is not a spin), a range with
/// `min >= max` or outside the engine's, a start outside the range, a
/// non-positive `c_end` or `r_end`, a parameter named twice, or nothing to
/// tune.
pub fn resolve(specs: &[TuneSpec], options: &[SpinOption], r_end: f64) -> Result<Vec<Tunable>> {
    let specs: Vec<TuneSpec> = if specs.is_empty() {
        options
            .iter()
            .filter(|o| {
                !MANAGEMENT_OPTIONS
                    .iter()
                    .any(|m| m.eq_ignore_ascii_case(&o.name))
            })
            .map(|o| TuneSpec {
                name: o.name.clone(),
                start: None,
                range: None,
                c_end: None,
                r_end: None,
            })
            .collect()
    } else {
        specs.to_vec()
    };
    ensure!(!specs.is_empty(), "the engine has no spin option to tune");
    let mut tunables: Vec<Tunable> = Vec::with_capacity(specs.len());
    for spec in &specs {
        let Some(option) = options
            .iter()
            .find(|o| o.name.eq_ignore_ascii_case(&spec.name))
        else {
            let names: Vec<&str> = options.iter().map(|o| o.name.as_str()).collect();
            bail!(
                "the engine has no spin option {:?}; its spin options are: {}",
                spec.name,
                names.join(", ")
            );
        };
        let name = option.name.clone();
        ensure!(
            !tunables.iter().any(|t| t.name == name),
            "{name} is named twice"
        );
        let (min, max) = spec
            .range
            .unwrap_or((f64::from(option.min), f64::from(option.max)));
        ensure!(
            min < max,
            "{name}: the range {min}..{max} is empty (min >= max)"
        );
        ensure!(
            min >= f64::from(option.min) && max <= f64::from(option.max),
            "{name}: the range {min}..{max} exceeds the engine's {}..{}",
            option.min,
            option.max
        );
        let start = spec.start.unwrap_or(f64::from(option.default));
        ensure!(
            (min..=max).contains(&start),
            "{name}: the start {start} lies outside {min}..{max}"
        );
        let c_end = spec.c_end.unwrap_or_else(|| {
            declared_step(&name, min as i32, max as i32).unwrap_or((max - min) / RANGE_PER_C_END)
        });
        let r_end = spec.r_end.unwrap_or(r_end);
        ensure!(
            c_end > 0.0 && r_end > 0.0,
            "{name}: C_END and R_END must be positive"
        );
        tunables.push(Tunable {
            name,
            start,
            min,
            max,
            c_end,
            r_end,
        });
    }
    Ok(tunables)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options() -> Vec<SpinOption> {
        let spin = |name: &str, default, min, max| SpinOption {
            name: name.into(),
            default,
            min,
            max,
        };
        vec![
            spin("Hash", 16, 1, 1024),
            spin("rfp_margin", 80, 20, 250),
            spin("Aggression", 50, 0, 200),
        ]
    }

    fn resolved(specs: &[&str]) -> Result<Vec<Tunable>> {
        let specs: Vec<TuneSpec> = specs.iter().map(|s| s.parse()).collect::<Result<_>>()?;
        resolve(&specs, &options(), 0.002)
    }

    #[test]
    fn defaults_and_overrides() {
        let all = resolved(&[]).unwrap();
        let names: Vec<&str> = all.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["rfp_margin", "Aggression"], "Hash is not tuned");
        // Our declared step for our parameter, a twentieth of the range
        // otherwise.
        assert_eq!((all[0].start, all[0].c_end), (80.0, 8.0));
        assert_eq!((all[1].c_end, all[1].r_end), (10.0, 0.002));
        let t = resolved(&["RFP_MARGIN=200", "aggression=10,0,100,4,0.01"]).unwrap();
        assert_eq!(t[0].name, "rfp_margin");
        assert_eq!((t[0].start, t[0].min, t[0].max), (200.0, 20.0, 250.0));
        assert_eq!(
            (t[1].min, t[1].max, t[1].c_end, t[1].r_end),
            (0.0, 100.0, 4.0, 0.01)
        );
        // Hash can be tuned when named.
        assert_eq!(resolved(&["Hash"]).unwrap()[0].name, "Hash");
    }

    #[test]
    fn bad_specifications_are_clear_errors() {
        let err = |specs: &[&str]| format!("{:#}", resolved(specs).unwrap_err());
        assert!(err(&["nope"]).contains("no spin option \"nope\"; its spin options are: Hash"));
        assert!(err(&["=3"]).contains("expected NAME"));
        assert!(err(&["rfp_margin=x"]).contains("START \"x\" is not a number"));
        assert!(err(&["rfp_margin=1,2"]).contains("expected NAME=START"));
        assert!(err(&["rfp_margin=100,200,50"]).contains("min >= max"));
        assert!(err(&["rfp_margin=100,0,300"]).contains("exceeds the engine's 20..250"));
        assert!(err(&["rfp_margin=10"]).contains("start 10 lies outside 20..250"));
        assert!(err(&["rfp_margin", "RFP_margin"]).contains("named twice"));
        assert!(err(&["rfp_margin=80,20,250,0"]).contains("must be positive"));
    }

    #[test]
    fn openbench_inputs() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("inputs.txt");
        std::fs::write(&path, "# ours\nrfp_margin, int, 100, 20, 250, 8, 0.002\n").unwrap();
        let specs = read_inputs(&path).unwrap();
        let t = resolve(&specs, &options(), 0.5).unwrap();
        assert_eq!((t[0].start, t[0].c_end, t[0].r_end), (100.0, 8.0, 0.002));
        std::fs::write(&path, "\nrfp_margin, float, 1, 0, 2, 0.1, 0.002\n").unwrap();
        let e = format!("{:#}", read_inputs(&path).unwrap_err());
        assert!(e.contains("inputs.txt:2: only int parameters"), "{e}");
        std::fs::write(&path, "rfp_margin, int, 1, 0\n").unwrap();
        let e = format!("{:#}", read_inputs(&path).unwrap_err());
        assert!(e.contains("inputs.txt:1: expected NAME, int"), "{e}");
    }
}
