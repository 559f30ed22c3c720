//! LSP's framing over stdio, forgiving of what is inside a frame.
//!
//! lsp-server's own stdio transport stops reading at the first message whose JSON does not
//! parse (a lone surrogate in a string, bytes that are not UTF-8): the server then sees its
//! client go away, and the editor silently loses the user's diagnostics. Here such a message is
//! logged to stderr and skipped; only a broken frame (no `Content-Length`, a body cut short)
//! ends the connection, since nothing after it can be found. The reader also reads ahead
//! without waiting for the server, so that the server sees every change queued behind the one
//! it is analysing and analyses only the newest.

use std::io::{self, BufRead, Write};
use std::thread;

use crossbeam_channel::{Receiver, Sender, unbounded};
use lsp_server::{Connection, Message};

/// The threads that read stdin and write stdout for a [`Connection`].
pub(crate) struct Threads {
    reader: thread::JoinHandle<io::Result<()>>,
    writer: thread::JoinHandle<io::Result<()>>,
}

impl Threads {
    /// Waits for both threads: the reader ends at `exit` or the end of stdin, the writer once
    /// the connection is dropped.
    pub(crate) fn join(self) -> io::Result<()> {
        let reader = self
            .reader
            .join()
            .unwrap_or_else(|_| Err(panicked("reader")));
        let writer = self
            .writer
            .join()
            .unwrap_or_else(|_| Err(panicked("writer")));
        reader.and(writer)
    }
}

fn panicked(thread: &str) -> io::Error {
    io::Error::other(format!("the stdio {thread} thread panicked"))
}

/// A connection over this process's stdin and stdout.
pub(crate) fn stdio() -> (Connection, Threads) {
    let (to_server, from_client) = unbounded();
    let (to_client, from_server) = unbounded::<Message>();
    let reader = thread::spawn(move || read_all(&mut io::stdin().lock(), &to_server));
    let writer = thread::spawn(move || write_all(&mut io::stdout().lock(), &from_server));
    let connection = Connection {
        sender: to_client,
        receiver: from_client,
    };
    (connection, Threads { reader, writer })
}

/// Reads messages from `input` into `server` until `exit`, the end of the input, or a frame
/// that cannot be read; a frame whose body does not parse is logged and skipped.
pub(crate) fn read_all(input: &mut impl BufRead, server: &Sender<Message>) -> io::Result<()> {
    while let Some(body) = read_frame(input)? {
        let message = match serde_json::from_slice::<Message>(&body) {
            Ok(message) => message,
            Err(error) => {
                eprintln!("trellis lsp: skipped a message that is not valid JSON-RPC: {error}");
                continue;
            }
        };
        let exit = matches!(&message, Message::Notification(n) if n.method == "exit");
        if server.send(message).is_err() || exit {
            break;
        }
    }
    Ok(())
}

fn write_all(output: &mut impl Write, messages: &Receiver<Message>) -> io::Result<()> {
    for message in messages {
        message.write(output)?;
    }
    Ok(())
}

/// One frame's body: headers up to an empty line, then `Content-Length` bytes. `None` at the
/// end of the input between frames.
fn read_frame(input: &mut impl BufRead) -> io::Result<Option<Vec<u8>>> {
    let mut length = None;
    let mut headers = 0;
    let mut line = Vec::new();
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            return match headers {
                0 => Ok(None),
                _ => Err(broken("the input ended inside a frame's headers")),
            };
        }
        let header = line.strip_suffix(b"\n").unwrap_or(&line);
        let header = header.strip_suffix(b"\r").unwrap_or(header);
        if header.is_empty() {
            if headers == 0 {
                // A stray blank line between frames.
                continue;
            }
            break;
        }
        headers += 1;
        let header = String::from_utf8_lossy(header);
        if let Some((name, value)) = header.split_once(':')
            && name.trim().eq_ignore_ascii_case("content-length")
        {
            let value = value.trim().parse::<usize>().map_err(|_| {
                broken(&format!(
                    "`Content-Length: {}` is not a length",
                    value.trim()
                ))
            })?;
            length = Some(value);
        }
    }
    let length = length.ok_or_else(|| broken("a frame has no Content-Length"))?;
    let mut body = vec![0; length];
    input.read_exact(&mut body)?;
    Ok(Some(body))
}

fn broken(reason: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, reason.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(body: &[u8]) -> Vec<u8> {
        let mut framed = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
        framed.extend_from_slice(body);
        framed
    }

    #[test]
    fn a_message_that_does_not_parse_is_skipped_and_the_next_one_read() {
        let mut input = Vec::new();
        // A lone surrogate, then bytes that are not UTF-8, then a good message.
        input.extend(frame(
            br#"{"jsonrpc":"2.0","method":"x","params":{"t":"\ud800"}}"#,
        ));
        input.extend(frame(
            b"{\"jsonrpc\":\"2.0\",\"method\":\"\xff\xfe\",\"params\":null}",
        ));
        input.extend(frame(br#"{"jsonrpc":"2.0","method":"exit"}"#));
        input.extend(frame(br#"{"jsonrpc":"2.0","method":"after exit"}"#));
        let (sender, receiver) = unbounded();
        read_all(&mut input.as_slice(), &sender).unwrap();
        drop(sender);
        let read: Vec<Message> = receiver.into_iter().collect();
        assert_eq!(read.len(), 1, "{read:?}");
        assert!(matches!(&read[0], Message::Notification(n) if n.method == "exit"));
    }

    #[test]
    fn a_frame_without_a_length_ends_the_connection_with_the_reason() {
        let (sender, _receiver) = unbounded();
        let error = read_all(&mut b"Content-Type: x\r\n\r\n{}".as_slice(), &sender).unwrap_err();
        assert_eq!(error.to_string(), "a frame has no Content-Length");
    }
}
