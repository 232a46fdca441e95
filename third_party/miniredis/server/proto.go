package server

import (
	"bufio"
	"errors"
	"strconv"
)

type Simple string

// ErrProtocol is the general error for unexpected input
var ErrProtocol = errors.New("invalid request")

// client always sends arrays with bulk strings
func readArray(rd *bufio.Reader) ([]string, error) {
	line, err := rd.ReadString('\n')
	if err != nil {
		return nil, err
	}
	if len(line) < 3 {
		return nil, ErrProtocol
	}

	switch line[0] {
	default:
		return nil, ErrProtocol
	case '*':
		l, err := strconv.Atoi(line[1 : len(line)-2])
		if err != nil {
			return nil, err
		}
		// l can be -1
		var fields []string
		for ; l > 0; l-- {
			s, err := readString(rd)
			if err != nil {
				return nil, err
			}
			fields = append(fields, s)
		}
		return fields, nil
	}
}

func readString(rd *bufio.Reader) (string, error) {
	line, err := rd.ReadString('\n')
	if err != nil {
		return "", err
	}
	if len(line) < 3 {
		return "", ErrProtocol
	}

	switch line[0] {
	default:
		return "", ErrProtocol
	case '+', '-', ':':
		// +: simple string
		// -: errors
		// :: integer
		// Simple line based replies.
		return string(line[1 : len(line)-2]), nil
	case '$':
		// bulk strings are: `$5\r\nhello\r\n`
		length, err := strconv.Atoi(line[1 : len(line)-2])
		if err != nil {
			return "", err
		}
		if length < 0 {
			// -1 is a nil response
			return "", nil
		}
		var (
			buf = make([]byte, length+2)
			pos = 0
		)
		for pos < length+2 {
			n, err := rd.Read(buf[pos:])
			if err != nil {
				return "", err
			}
			pos += n
		}
		return string(buf[:length]), nil
	}
}

// parse a reply
func ParseReply(rd *bufio.Reader) (interface{}, error) {
	// The line is read in place: only the values returned are allocated.
	line, err := rd.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		// longer than the buffer: the rest read as before
		var rest string
		line = append([]byte(nil), line...)
		rest, err = rd.ReadString('\n')
		line = append(line, rest...)
	}
	if err != nil {
		return nil, err
	}
	if len(line) < 3 {
		return nil, ErrProtocol
	}
	v := line[1 : len(line)-2]

	switch line[0] {
	default:
		return nil, ErrProtocol
	case '+':
		// +: simple string
		return Simple(v), nil
	case '-':
		// -: errors
		return nil, errors.New(string(v))
	case ':':
		// :: integer
		if len(v) == 0 {
			return 0, nil
		}
		n, err := atoi(v)
		if err != nil {
			return nil, ErrProtocol
		}
		return n, nil
	case '$':
		// bulk strings are: `$5\r\nhello\r\n`
		length, err := atoi(v)
		if err != nil {
			return "", err
		}
		if length < 0 {
			// -1 is a nil response
			return nil, nil
		}
		if b, err := rd.Peek(length + 2); err == nil {
			s := string(b[:length])
			_, _ = rd.Discard(length + 2)
			return s, nil
		}
		var (
			buf = make([]byte, length+2)
			pos = 0
		)
		for pos < length+2 {
			n, err := rd.Read(buf[pos:])
			if err != nil {
				return "", err
			}
			pos += n
		}
		return string(buf[:length]), nil
	case '*':
		// array
		l, err := atoi(v)
		if err != nil {
			return nil, ErrProtocol
		}
		// l can be -1
		if l < 0 {
			return nil, nil
		}
		var fields []interface{}
		if l > 0 {
			fields = make([]interface{}, 0, l)
		}
		for ; l > 0; l-- {
			s, err := ParseReply(rd)
			if err != nil {
				return nil, err
			}
			fields = append(fields, s)
		}
		return fields, nil
	}
}

// atoi is strconv.Atoi on bytes, without converting them to a string first.
func atoi(b []byte) (int, error) {
	if len(b) > 0 && len(b) < 19 {
		neg := b[0] == '-'
		d := b
		if neg || b[0] == '+' {
			d = b[1:]
		}
		n := 0
		for _, c := range d {
			if c < '0' || c > '9' {
				n = -1
				break
			}
			n = n*10 + int(c-'0')
		}
		if n >= 0 && len(d) > 0 {
			if neg {
				n = -n
			}
			return n, nil
		}
	}
	return strconv.Atoi(string(b))
}
