//! The little JSON the event log needs, by hand: string escaping for the writer, and a
//! parser of one flat object (scalars, and objects of scalars one level down) for the
//! reader. The library has no JSON dependency outside the soak tool's feature, and a log
//! line is small and flat, so a strict parser of that shape is short and never panics:
//! every byte it indexes is checked, and nesting is refused past one level. The parser
//! hands each member to a [`Visitor`] as it reads it, strings borrowed from the line: a
//! line read costs no allocation.

use std::borrow::Cow;
use std::fmt::Write as _;

/// A scalar value as written: its text (a string's contents unescaped, a number's or a
/// literal's own characters) and whether it was a string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value<'a> {
    /// A string, unescaped (borrowed from the line when it holds no escape).
    Str(Cow<'a, str>),
    /// A number, as its text in the line.
    Number(&'a str),
    /// `true` or `false`.
    Bool(bool),
    /// `null`.
    Null,
    /// An object of scalars: its members are handed to the visitor after this value,
    /// with its key as their parent, then [`Visitor::end_object`].
    Object,
}

/// Appends `text` to `out` as a JSON string, quotes included.
pub fn push_string(out: &mut String, text: &str) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 => {
                // Writing to a String cannot fail.
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Why a line is not the JSON object the log needs, and at which byte (0-based).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// Byte offset in the line.
    pub at: usize,
    /// What was expected or found.
    pub reason: &'static str,
}

/// What a parsed line's members are handed to, in the order written.
pub trait Visitor<'a> {
    /// A member: of the line's object (`parent` is `None`), or of the object held by the
    /// line's member `parent`.
    fn member(&mut self, parent: Option<&str>, key: Cow<'a, str>, value: Value<'a>);

    /// The end of the object held by the line's member `key`.
    fn end_object(&mut self, key: &str);
}

/// Parses `line` as one JSON object whose values are scalars or objects of scalars,
/// handing each member to `visitor`.
pub fn parse_object<'a>(line: &'a str, visitor: &mut impl Visitor<'a>) -> Result<(), ParseError> {
    let mut parser = Parser {
        text: line,
        bytes: line.as_bytes(),
        at: 0,
    };
    parser.skip_space();
    parser.object(None, visitor)?;
    parser.skip_space();
    if parser.at != parser.bytes.len() {
        return Err(parser.error("text after the object"));
    }
    Ok(())
}

/// The bytes that end a string's run of plain bytes: a quote, a backslash, a control
/// character (one table lookup a byte, not three comparisons).
static ENDS_A_RUN: [bool; 256] = {
    let mut table = [false; 256];
    let mut byte = 0;
    while byte < 0x20 {
        table[byte] = true;
        byte += 1;
    }
    table[b'"' as usize] = true;
    table[b'\\' as usize] = true;
    table
};

/// Deepest object nesting accepted: the line's object (0) and its `fields` (1).
const MAX_DEPTH: usize = 1;

struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Parser<'a> {
    fn error(&self, reason: &'static str) -> ParseError {
        ParseError {
            at: self.at,
            reason,
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn skip_space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\r' | b'\n')) {
            self.at += 1;
        }
    }

    fn expect(&mut self, byte: u8, reason: &'static str) -> Result<(), ParseError> {
        if self.peek() == Some(byte) {
            self.at += 1;
            Ok(())
        } else {
            Err(self.error(reason))
        }
    }

    /// An object's members, handed to `visitor`: the line's (`parent` is `None`) or the
    /// one its member `parent` holds.
    fn object(
        &mut self,
        parent: Option<&str>,
        visitor: &mut impl Visitor<'a>,
    ) -> Result<(), ParseError> {
        self.expect(b'{', "expected `{`")?;
        self.skip_space();
        if self.peek() == Some(b'}') {
            self.at += 1;
            return Ok(());
        }
        let depth = usize::from(parent.is_some());
        loop {
            self.skip_space();
            let key = self.string()?;
            self.skip_space();
            self.expect(b':', "expected `:` after a key")?;
            self.skip_space();
            if self.peek() == Some(b'{') && depth < MAX_DEPTH {
                visitor.member(parent, key.clone(), Value::Object);
                self.object(Some(&key), visitor)?;
                visitor.end_object(&key);
            } else {
                let value = self.value()?;
                visitor.member(parent, key, value);
            }
            self.skip_space();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b'}') => {
                    self.at += 1;
                    return Ok(());
                }
                _ => return Err(self.error("expected `,` or `}`")),
            }
        }
    }

    fn value(&mut self) -> Result<Value<'a>, ParseError> {
        match self.peek() {
            Some(b'"') => self.string().map(Value::Str),
            Some(b'{' | b'[') => Err(self.error("nested value where a scalar is expected")),
            Some(b't') => self.literal("true", Value::Bool(true)),
            Some(b'f') => self.literal("false", Value::Bool(false)),
            Some(b'n') => self.literal("null", Value::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => Err(self.error("expected a value")),
        }
    }

    fn literal(&mut self, word: &'static str, value: Value<'a>) -> Result<Value<'a>, ParseError> {
        if self.bytes[self.at..].starts_with(word.as_bytes()) {
            self.at += word.len();
            Ok(value)
        } else {
            Err(self.error("expected `true`, `false` or `null`"))
        }
    }

    fn number(&mut self) -> Result<Value<'a>, ParseError> {
        let start = self.at;
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        let digits = self.digits();
        if digits == 0 {
            return Err(self.error("expected digits"));
        }
        if self.peek() == Some(b'.') {
            self.at += 1;
            if self.digits() == 0 {
                return Err(self.error("expected digits after `.`"));
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.at += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.at += 1;
            }
            if self.digits() == 0 {
                return Err(self.error("expected exponent digits"));
            }
        }
        // The bytes are ASCII digits and signs: valid UTF-8.
        Ok(Value::Number(&self.text[start..self.at]))
    }

    fn digits(&mut self) -> usize {
        let start = self.at;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.at += 1;
        }
        self.at - start
    }

    /// A string, borrowed from the line when it holds no escape (most do).
    fn string(&mut self) -> Result<Cow<'a, str>, ParseError> {
        self.expect(b'"', "expected a string")?;
        let mut out: Option<String> = None;
        loop {
            // A run of plain bytes: it starts and ends beside ASCII bytes (quotes,
            // backslashes, escapes' ends), so it is whole characters of the line.
            let start = self.at;
            let run = self.bytes[start..]
                .iter()
                .position(|&b| ENDS_A_RUN[usize::from(b)])
                .unwrap_or(self.bytes.len() - start);
            self.at += run;
            let plain = &self.text[start..self.at];
            match self.peek() {
                None => return Err(self.error("unterminated string")),
                Some(b'"') => {
                    self.at += 1;
                    return Ok(match out {
                        None => Cow::Borrowed(plain),
                        Some(mut text) => {
                            text.push_str(plain);
                            Cow::Owned(text)
                        }
                    });
                }
                Some(b'\\') => {
                    self.at += 1;
                    let text = out.get_or_insert_with(String::new);
                    text.push_str(plain);
                    text.push(self.escape()?);
                }
                Some(_) => return Err(self.error("control character in a string")),
            }
        }
    }

    fn escape(&mut self) -> Result<char, ParseError> {
        let Some(byte) = self.peek() else {
            return Err(self.error("unterminated escape"));
        };
        self.at += 1;
        Ok(match byte {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => return self.unicode_escape(),
            _ => return Err(self.error("unknown escape")),
        })
    }

    /// `\uXXXX`, with a following `\uXXXX` low surrogate when the first is a high one.
    fn unicode_escape(&mut self) -> Result<char, ParseError> {
        let first = self.hex4()?;
        let code = if (0xD800..0xDC00).contains(&first) {
            if !self.bytes[self.at..].starts_with(b"\\u") {
                return Err(self.error("high surrogate without its low surrogate"));
            }
            self.at += 2;
            let second = self.hex4()?;
            if !(0xDC00..0xE000).contains(&second) {
                return Err(self.error("high surrogate without its low surrogate"));
            }
            0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
        } else {
            first
        };
        char::from_u32(code).ok_or_else(|| self.error("escape is not a character"))
    }

    fn hex4(&mut self) -> Result<u32, ParseError> {
        let Some(hex) = self.bytes.get(self.at..self.at + 4) else {
            return Err(self.error("short \\u escape"));
        };
        if !hex.iter().all(u8::is_ascii_hexdigit) {
            return Err(self.error("bad \\u escape"));
        }
        let code = hex
            .iter()
            .fold(0, |code, &digit| code * 16 + hex_value(digit));
        self.at += 4;
        Ok(code)
    }
}

fn hex_value(digit: u8) -> u32 {
    match digit {
        b'0'..=b'9' => u32::from(digit - b'0'),
        b'a'..=b'f' => u32::from(digit - b'a') + 10,
        _ => u32::from(digit.to_ascii_lowercase().wrapping_sub(b'a')) + 10,
    }
}
