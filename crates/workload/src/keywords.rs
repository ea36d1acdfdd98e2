//! fio's reserved keywords in option values — `$pagesize`, `$mb_memory` and `$ncpus` — and
//! the arithmetic fio does on a value that holds one (`size=($mb_memory/4)`,
//! `numjobs=$ncpus*2`).
//!
//! fio replaces each keyword by the machine's figure, then, when the option line holds `+`,
//! `-`, `*` or `/` (and no `'`), hands the value to `bc`: whole numbers, `+ - * / % ^`,
//! parentheses, division cut toward zero. A value without a keyword is left alone, math or
//! not (fio 3.33 as Debian builds it reads `size=(2*2)` as a bad size). The same here, with
//! the evaluation done in-process.
//!
//! This module is pure: the machine's figures come in as [`Keywords`], which the CLI reads
//! at its edge.

/// The figures fio's keywords stand for, on the machine that runs the job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Keywords {
    /// `$pagesize`: bytes in a memory page.
    pub pagesize: u64,
    /// `$mb_memory`: MiB of physical memory (fio's "megabytes of memory online").
    pub mb_memory: u64,
    /// `$ncpus`: CPUs online.
    pub ncpus: u64,
}

/// The keywords in the order fio replaces them.
const WORDS: [&str; 3] = ["$pagesize", "$mb_memory", "$ncpus"];

/// `value` (of option `key`) with fio's keywords replaced and, if it held one and the line
/// has math in it, evaluated as fio's `bc` does. `None` if it holds no keyword.
pub fn substitute(key: &str, value: &str, kw: &Keywords) -> Result<Option<String>, String> {
    if !value.contains('$') {
        return Ok(None);
    }
    let mut out = value.to_string();
    let mut replaced = false;
    for (word, figure) in WORDS.iter().zip([kw.pagesize, kw.mb_memory, kw.ncpus]) {
        if out.contains(word) {
            out = out.replace(word, &figure.to_string());
            replaced = true;
        }
    }
    if !replaced {
        return Ok(None);
    }
    let line = format!("{key}={out}");
    if !line.contains(['+', '-', '*', '/']) || line.contains('\'') {
        return Ok(Some(out));
    }
    match evaluate(&out) {
        Ok(v) => Ok(Some(v.to_string())),
        Err(why) => Err(format!(
            "'{value}' is '{out}' with fio's keywords replaced, which is not arithmetic fio's bc takes: {why} (valid: whole numbers, + - * / % ^ and parentheses, e.g. ($mb_memory/4))"
        )),
    }
}

/// Evaluate `text` as `bc` does with its default scale of 0: whole numbers, `^` (power,
/// right to left), unary `-`, then `* / %`, then `+ -`, parentheses; division and `%` cut
/// toward zero.
pub fn evaluate(text: &str) -> Result<i128, String> {
    let tokens: Vec<char> = text.chars().filter(|c| !c.is_whitespace()).collect();
    let mut p = Calc { t: &tokens, at: 0 };
    let v = p.sum()?;
    match p.t.get(p.at) {
        None => Ok(v),
        Some(c) => Err(format!("'{c}' where an operator or the end was due")),
    }
}

struct Calc<'a> {
    t: &'a [char],
    at: usize,
}

impl Calc<'_> {
    fn peek(&self) -> Option<char> {
        self.t.get(self.at).copied()
    }

    fn sum(&mut self) -> Result<i128, String> {
        let mut v = self.product()?;
        while let Some(op @ ('+' | '-')) = self.peek() {
            self.at += 1;
            let r = self.product()?;
            v = if op == '+' {
                v.checked_add(r)
            } else {
                v.checked_sub(r)
            }
            .ok_or(TOO_LARGE)?;
        }
        Ok(v)
    }

    fn product(&mut self) -> Result<i128, String> {
        let mut v = self.power()?;
        while let Some(op @ ('*' | '/' | '%')) = self.peek() {
            self.at += 1;
            let r = self.power()?;
            v = match op {
                '*' => v.checked_mul(r).ok_or(TOO_LARGE)?,
                _ if r == 0 => return Err("division by zero".into()),
                '/' => v / r,
                _ => v % r,
            };
        }
        Ok(v)
    }

    fn power(&mut self) -> Result<i128, String> {
        let base = self.unary()?;
        if self.peek() == Some('^') {
            self.at += 1;
            let exp = self.power()?;
            if exp < 0 {
                // (bc: a negative power is 0 at scale 0, but for ±1.)
                return Ok(match base {
                    1 => 1,
                    -1 => {
                        if exp % 2 == 0 {
                            1
                        } else {
                            -1
                        }
                    }
                    0 => return Err("division by zero".into()),
                    _ => 0,
                });
            }
            let exp = u32::try_from(exp).map_err(|_| TOO_LARGE.to_string())?;
            return base.checked_pow(exp).ok_or_else(|| TOO_LARGE.into());
        }
        Ok(base)
    }

    fn unary(&mut self) -> Result<i128, String> {
        if self.peek() == Some('-') {
            self.at += 1;
            return Ok(-self.unary()?);
        }
        self.atom()
    }

    fn atom(&mut self) -> Result<i128, String> {
        match self.peek() {
            Some('(') => {
                self.at += 1;
                let v = self.sum()?;
                if self.peek() != Some(')') {
                    return Err("'(' without its ')'".into());
                }
                self.at += 1;
                Ok(v)
            }
            Some(c) if c.is_ascii_digit() => {
                let start = self.at;
                while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                    self.at += 1;
                }
                let digits: String = self.t[start..self.at].iter().collect();
                digits.parse().map_err(|_| TOO_LARGE.to_string())
            }
            Some(c) => Err(format!("'{c}' where a number was due")),
            None => Err("it ends where a number was due".into()),
        }
    }
}

const TOO_LARGE: &str = "a number too large";

#[cfg(test)]
mod tests {
    use super::*;

    const KW: Keywords = Keywords {
        pagesize: 4096,
        mb_memory: 24_000,
        ncpus: 2,
    };

    #[test]
    fn keywords_are_replaced_and_math_evaluated_as_fio_does() {
        let s = |k: &str, v: &str| substitute(k, v, &KW);
        assert_eq!(s("size", "4m"), Ok(None));
        assert_eq!(s("filename", "/tmp/$x"), Ok(None));
        assert_eq!(s("numjobs", "$ncpus"), Ok(Some("2".into())));
        assert_eq!(s("size", "$pagesize"), Ok(Some("4096".into())));
        assert_eq!(s("size", "($pagesize*16)"), Ok(Some("65536".into())));
        assert_eq!(s("size", "$mb_memory/7"), Ok(Some("3428".into())));
        assert_eq!(
            s("bs", "$pagesize * ($ncpus + 2) ^ 2 % 100000"),
            Ok(Some("65536".into()))
        );
        // A keyword and no math: the value with the figure in it, for the option to read.
        assert_eq!(s("size", "${x}$ncpus"), Ok(Some("${x}2".into())));
        // Math that bc refuses is an error naming what it became.
        let e = s("size", "($mb_memory/2)m").unwrap_err();
        assert!(e.contains("'(24000/2)m'") && e.contains("'m'"), "{e}");
        assert!(s("size", "$ncpus/0")
            .unwrap_err()
            .contains("division by zero"));
    }

    #[test]
    fn arithmetic_follows_bc() {
        assert_eq!(evaluate("7/2"), Ok(3));
        assert_eq!(evaluate("-7/2"), Ok(-3));
        assert_eq!(evaluate("-7%2"), Ok(-1));
        assert_eq!(evaluate("2^3^2"), Ok(512));
        assert_eq!(evaluate("-2^2"), Ok(4));
        assert_eq!(evaluate("2^-1"), Ok(0));
        assert_eq!(evaluate("1+2*3-4"), Ok(3));
        assert_eq!(evaluate("(1+2)*3"), Ok(9));
        assert!(evaluate("(1+2").is_err());
        assert!(evaluate("1+").is_err());
        assert!(evaluate("2^200").is_err());
    }
}
