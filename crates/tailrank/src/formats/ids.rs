//! Id lists: text, one id per line (`.gz` accepted), blank lines ignored, CRLF tolerated.
//! TODO(formats helper): implement `read_ids`, `write_ids`, duplicate checks.
