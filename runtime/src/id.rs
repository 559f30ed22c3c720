//! Run ids that sort by creation time, and UTC timestamps that compare by instant.

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// A point in time, kept in UTC.
///
/// Serialized as RFC 3339 in UTC with microseconds (`2026-12-02T19:56:11.123456Z`); parsing
/// accepts any RFC 3339 offset and converts to UTC, so records written with an offset still
/// order by the instant they name rather than by their text.
///
/// Kept as microseconds since the Unix epoch, within the years 0000–9999 that the text can
/// say (clamped there): every checkpoint reads the clock and adds a lease to it, and as a
/// calendar date-time each of those cost ~150 instructions of an `interrupt_resume` cycle, where
/// the calendar is only needed to write the text.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(i64);

/// Text that is not an RFC 3339 date and time.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid RFC 3339 timestamp `{text}`: {reason}")]
pub struct TimestampError {
    text: String,
    reason: String,
}

/// `0000-01-01T00:00:00Z` and `9999-12-31T23:59:59.999999Z` in microseconds since the epoch.
const FIRST: i64 = -62_167_219_200_000_000;
const LAST: i64 = 253_402_300_799_999_999;

impl Timestamp {
    /// The current time, to the microsecond.
    pub fn now() -> Self {
        let micros = |d: std::time::Duration| i64::try_from(d.as_micros()).unwrap_or(i64::MAX);
        match std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
            Ok(since) => Timestamp::from_micros(micros(since)),
            // A clock set before 1970.
            Err(before) => Timestamp::from_micros(micros(before.duration()).saturating_neg()),
        }
    }

    /// `micros` since the epoch, clamped to the years the text can say.
    fn from_micros(micros: i64) -> Self {
        Timestamp(micros.clamp(FIRST, LAST))
    }

    /// Milliseconds since the Unix epoch (rounded down).
    pub fn unix_millis(self) -> i64 {
        self.0.div_euclid(1_000)
    }

    /// This time plus `duration` (saturating).
    pub fn plus(self, duration: std::time::Duration) -> Self {
        let micros = i64::try_from(duration.as_micros()).unwrap_or(i64::MAX);
        Timestamp::from_micros(self.0.saturating_add(micros))
    }

    /// Microseconds since the Unix epoch, rounded down (what durable backends order by).
    pub fn unix_micros(self) -> i64 {
        self.0
    }

    /// The instant as a calendar date-time in UTC.
    fn calendar(self) -> OffsetDateTime {
        // In range by construction; the epoch only if that were ever broken.
        OffsetDateTime::from_unix_timestamp_nanos(i128::from(self.0) * 1_000)
            .unwrap_or(OffsetDateTime::UNIX_EPOCH)
    }

    /// The instant, for drivers that bind date-times.
    #[cfg(feature = "postgres")]
    pub(crate) fn datetime(self) -> OffsetDateTime {
        self.calendar()
    }

    /// An instant read back from a driver, in UTC (to the microsecond).
    #[cfg(feature = "postgres")]
    pub(crate) fn from_datetime(at: OffsetDateTime) -> Self {
        Timestamp::from_calendar(at)
    }

    fn from_calendar(at: OffsetDateTime) -> Self {
        let micros = at.unix_timestamp_nanos().div_euclid(1_000);
        Timestamp::from_micros(i64::try_from(micros).unwrap_or(if micros < 0 {
            FIRST
        } else {
            LAST
        }))
    }

    /// Parses RFC 3339 text with any offset (to the microsecond: finer digits are dropped).
    ///
    /// # Errors
    /// [`TimestampError`] when `text` is not RFC 3339.
    pub fn parse(text: &str) -> Result<Self, TimestampError> {
        OffsetDateTime::parse(text, &Rfc3339)
            .map(Timestamp::from_calendar)
            .map_err(|e| TimestampError {
                text: text.to_owned(),
                reason: e.to_string(),
            })
    }
}

impl Timestamp {
    /// The RFC 3339 text, built on the stack: what [`Display`](fmt::Display) writes, for
    /// stores that bind it without a `String`.
    pub(crate) fn rfc3339(self) -> [u8; 27] {
        let t = self.calendar();
        let (year, month, day) = t.to_calendar_date();
        // 0–9999 by construction.
        let year = u32::try_from(year).unwrap_or(0);
        let (hour, minute, second, micro) = t.to_hms_micro();
        let mut text = *b"0000-00-00T00:00:00.000000Z";
        let mut put = |at: std::ops::Range<usize>, mut value: u32| {
            for digit in text[at].iter_mut().rev() {
                *digit = b'0' + (value % 10) as u8;
                value /= 10;
            }
        };
        put(0..4, year);
        put(5..7, u32::from(u8::from(month)));
        put(8..10, u32::from(day));
        put(11..13, u32::from(hour));
        put(14..16, u32::from(minute));
        put(17..19, u32::from(second));
        put(20..26, micro);
        text
    }
}

impl fmt::Display for Timestamp {
    /// RFC 3339 in UTC with microseconds, `2026-12-03T13:02:20.123456Z`. Written digit by digit:
    /// a durable step stores four of these, and through `write!`'s padded integers each cost
    /// ~3,000 instructions (a tenth of a SQLite step's CPU).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(std::str::from_utf8(&self.rfc3339()).map_err(|_| fmt::Error)?)
    }
}

impl fmt::Debug for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl FromStr for Timestamp {
    type Err = TimestampError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Timestamp::parse(s)
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Timestamp::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// The id of one graph run: 26 characters of Crockford base32 (a ULID), whose text order is the
/// order runs were created in (to the millisecond across processes, exactly within one).
///
/// Shared, not copied: every checkpoint, record and event of a run names it, and a clone is a
/// reference count, not an allocation.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RunId(Arc<str>);

impl Serialize for RunId {
    fn serialize<Ser: Serializer>(&self, serializer: Ser) -> Result<Ser::Ok, Ser::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for RunId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(RunId::from)
    }
}

/// The ULIDs of this process, from the `ulid` crate's monotonic generator: an id made in the
/// same millisecond as the last (or after the clock stepped back) is the last plus one, so ids
/// made here always increase.
static GENERATOR: Mutex<ulid::Generator> = Mutex::new(ulid::Generator::new());

/// A new ULID as text, greater than every one this process made before: run ids, message ids.
pub(crate) fn next_ulid() -> Arc<str> {
    let ulid = loop {
        let mut generator = GENERATOR
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        match generator.generate() {
            Ok(ulid) => break ulid,
            // 2^80 ids in one millisecond: wait for the next one.
            Err(_) => {
                drop(generator);
                std::thread::yield_now();
            }
        }
    };
    let mut text = [0u8; ulid::ULID_LEN];
    Arc::from(&*ulid.array_to_str(&mut text))
}

impl RunId {
    /// A new id, greater than every id this process made before.
    pub fn new() -> Self {
        RunId(next_ulid())
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// For a subgraph's run, its namespace path under the top-level run: the segments naming
    /// the subgraph node and step at each level (`["research@3", "check@1"]` for
    /// `01J…/research@3/check@1`); empty for a top-level run. Every event carries its run's id,
    /// so this is where in the tree of runs the event happened.
    ///
    /// ```
    /// let child = trellis::RunId::from("01JDQ6VZ8M0000000000000000/research@3");
    /// assert_eq!(child.namespace().collect::<Vec<_>>(), ["research@3"]);
    /// assert_eq!(child.root(), "01JDQ6VZ8M0000000000000000");
    /// assert_eq!(child.parent().unwrap().as_str(), "01JDQ6VZ8M0000000000000000");
    /// ```
    pub fn namespace(&self) -> impl Iterator<Item = &str> {
        self.0.split('/').skip(1)
    }

    /// The top-level run this one belongs to (itself, for a top-level run).
    pub fn root(&self) -> &str {
        self.0.split('/').next().unwrap_or_default()
    }

    /// For a subgraph's run: the run of the node that runs it.
    pub fn parent(&self) -> Option<RunId> {
        self.0
            .rsplit_once('/')
            .map(|(parent, _)| RunId(parent.into()))
    }
}

impl Default for RunId {
    fn default() -> Self {
        RunId::new()
    }
}

impl fmt::Display for RunId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for RunId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RunId({})", self.0)
    }
}

impl From<&str> for RunId {
    /// Wraps an id read back from storage or typed by a person; it is not checked.
    fn from(text: &str) -> Self {
        RunId(text.into())
    }
}

impl From<String> for RunId {
    fn from(text: String) -> Self {
        RunId(text.into())
    }
}

impl PartialEq<str> for RunId {
    fn eq(&self, other: &str) -> bool {
        *self.0 == *other
    }
}

impl PartialOrd<str> for RunId {
    fn partial_cmp(&self, other: &str) -> Option<Ordering> {
        Some((*self.0).cmp(other))
    }
}

/// The id of a thread: state that outlives a run ([`Thread`](crate::thread::Thread)). A new one
/// is a ULID, as a run's; one chosen by a client (a LangGraph client sends UUIDs) is any text of
/// 1 to 128 letters, digits and `-_.:` — what fits a URL's path and a log line as it is.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ThreadId(Arc<str>);

/// Text that cannot be a [`ThreadId`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{text}` is not a thread id: {reason}")]
pub struct InvalidThreadId {
    /// The text, as given.
    pub text: String,
    /// What is wrong with it.
    pub reason: &'static str,
}

impl ThreadId {
    /// The longest id a thread may have.
    pub const MAX_LEN: usize = 128;

    /// A new id, greater than every run or thread id this process made before.
    pub fn new() -> Self {
        ThreadId(RunId::new().0)
    }

    /// `text` as a thread id, if it is one.
    ///
    /// ```
    /// use trellis::ThreadId;
    /// assert!(ThreadId::parse("2f9c1c4e-4b1a-4f53-9d4e-0c6f1e2a7b10").is_ok());
    /// assert!(ThreadId::parse("a/b").is_err());
    /// ```
    ///
    /// # Errors
    /// [`InvalidThreadId`] for empty text, text longer than [`MAX_LEN`](Self::MAX_LEN), or a
    /// character other than an ASCII letter, digit, `-`, `_`, `.` or `:`.
    pub fn parse(text: &str) -> Result<Self, InvalidThreadId> {
        let refuse = |reason| {
            Err(InvalidThreadId {
                text: text.to_owned(),
                reason,
            })
        };
        if text.is_empty() {
            return refuse("it is empty");
        }
        if text.len() > Self::MAX_LEN {
            return refuse("it is longer than 128 characters");
        }
        if !text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b':'))
        {
            return refuse("only ASCII letters, digits and `-_.:` may be in one");
        }
        Ok(ThreadId(text.into()))
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Default for ThreadId {
    fn default() -> Self {
        ThreadId::new()
    }
}

impl fmt::Display for ThreadId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for ThreadId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ThreadId({})", self.0)
    }
}

impl std::str::FromStr for ThreadId {
    type Err = InvalidThreadId;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        ThreadId::parse(text)
    }
}

impl Serialize for ThreadId {
    fn serialize<Ser: Serializer>(&self, serializer: Ser) -> Result<Ser::Ok, Ser::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for ThreadId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        ThreadId::parse(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_ids_are_url_safe_text_of_1_to_128_characters() {
        assert!(ThreadId::parse("2f9c1c4e-4b1a-4f53-9d4e-0c6f1e2a7b10").is_ok());
        assert!(ThreadId::parse("user:42.chat_7").is_ok());
        assert!(ThreadId::parse(&"a".repeat(128)).is_ok());
        for (text, reason) in [
            ("", "it is empty"),
            (&*"a".repeat(129), "it is longer than 128 characters"),
            (
                "grüße",
                "only ASCII letters, digits and `-_.:` may be in one",
            ),
            ("a/b", "only ASCII letters, digits and `-_.:` may be in one"),
            ("a b", "only ASCII letters, digits and `-_.:` may be in one"),
        ] {
            assert_eq!(
                ThreadId::parse(text).unwrap_err().reason,
                reason,
                "{text:?}"
            );
        }
        let id = ThreadId::new();
        assert_eq!(
            ThreadId::parse(id.as_str()).unwrap(),
            id,
            "a new id is a valid one"
        );
        let json = serde_json::to_string(&id).unwrap();
        assert_eq!(serde_json::from_str::<ThreadId>(&json).unwrap(), id);
        assert!(serde_json::from_str::<ThreadId>("\"a/b\"").is_err());
    }

    #[test]
    fn run_ids_increase_in_creation_order() {
        let ids: Vec<RunId> = (0..10_000).map(|_| RunId::new()).collect();
        assert!(ids.windows(2).all(|w| w[0] < w[1]));
        assert!(ids.iter().all(|id| id.as_str().len() == 26));
    }

    #[test]
    fn epoch_counts_are_the_instant_rounded_down() {
        for text in [
            "1970-01-01T00:00:00Z",
            "2026-12-04T18:06:29.123456Z",
            "2026-12-04T18:06:29.999999999Z",
            "1969-12-31T23:59:59.5Z",
            // Half a microsecond before the epoch: -1 µs rounded down (0 if truncated).
            "1969-12-31T23:59:59.9999995Z",
            "0001-01-01T00:00:00.000001Z",
            "9999-12-31T23:59:59.999999Z",
        ] {
            let at = Timestamp::parse(text).unwrap();
            let nanos = OffsetDateTime::parse(text, &Rfc3339)
                .unwrap()
                .unix_timestamp_nanos();
            let floor = |unit: i128| i64::try_from(nanos.div_euclid(unit)).unwrap();
            assert_eq!(at.unix_micros(), floor(1_000), "{text}");
            assert_eq!(at.unix_millis(), floor(1_000_000), "{text}");
        }
    }

    #[test]
    fn timestamps_normalise_offsets_to_utc() {
        let east = Timestamp::parse("2026-01-01T10:00:00+02:00").unwrap();
        let utc = Timestamp::parse("2026-01-01T09:00:00Z").unwrap();
        assert!(east < utc, "10:00 at +02:00 is 08:00 UTC");
        assert_eq!(east.to_string(), "2026-01-01T08:00:00.000000Z");
        let json = serde_json::to_string(&utc).unwrap();
        assert_eq!(json, "\"2026-01-01T09:00:00.000000Z\"");
        assert_eq!(serde_json::from_str::<Timestamp>(&json).unwrap(), utc);
        let error = Timestamp::parse("yesterday").unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("invalid RFC 3339 timestamp `yesterday`")
        );
    }

    #[test]
    fn timestamps_stay_within_the_years_their_text_can_say() {
        let first = Timestamp::parse("0000-01-01T00:00:00Z").unwrap();
        let last = Timestamp::parse("9999-12-31T23:59:59.999999Z").unwrap();
        assert_eq!((first.unix_micros(), last.unix_micros()), (FIRST, LAST));
        // An offset that puts the instant outside them, a lease of "forever", a clock read.
        let before = Timestamp::parse("0000-01-01T00:00:00+01:00").unwrap();
        assert_eq!(before.to_string(), "0000-01-01T00:00:00.000000Z");
        let after = Timestamp::parse("9999-12-31T23:59:59-01:00").unwrap();
        assert_eq!(after, last);
        assert_eq!(Timestamp::now().plus(std::time::Duration::MAX), last);
        assert_eq!(last.to_string(), "9999-12-31T23:59:59.999999Z");
        // Finer digits than microseconds are dropped, as the text drops them.
        let fine = Timestamp::parse("2026-12-03T13:02:20.123456789Z").unwrap();
        assert_eq!(
            fine,
            Timestamp::parse("2026-12-03T13:02:20.123456Z").unwrap()
        );
        let lease = fine.plus(std::time::Duration::from_secs(30));
        assert_eq!(lease.to_string(), "2026-12-03T13:02:50.123456Z");
    }

    #[test]
    fn timestamps_are_written_digit_by_digit_as_rfc_3339() {
        for text in [
            "2026-12-03T13:02:20.123456Z",
            "2024-02-29T23:59:59.999999Z",
            "0001-01-01T00:00:00.000001Z",
            "9999-12-31T00:00:00.000000Z",
            "1970-01-01T00:00:00.000000Z",
        ] {
            let at = Timestamp::parse(text).unwrap();
            assert_eq!(at.to_string(), text);
            assert_eq!(Timestamp::parse(&at.to_string()).unwrap(), at, "round trip");
        }
        let now = Timestamp::now();
        assert_eq!(Timestamp::parse(&now.to_string()).unwrap(), now);
    }
}
