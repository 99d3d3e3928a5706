package services

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"time"

	"golang.org/x/crypto/bcrypt"
	"gorm.io/gorm"

	"parley/models"
)

// Browser sessions and sign-in for humans (the web UI). Like everything
// else they live in the database, so servers stay stateless.
const (
	// SessionLifetime is how long a sign-in lasts.
	SessionLifetime = 14 * 24 * time.Hour
	signInWindow    = 15 * time.Minute
	setupLifetime   = 24 * time.Hour
)

// Session is a signed-in human: the cookie's secret (shown once, stored
// hashed), the CSRF token forms must carry, and the caller it acts as.
type Session struct {
	Token  string
	CSRF   string
	Caller Caller
}

// humanCaller is the caller a signed-in human acts as: a session, whose
// posts count against the rate limit (meterSessionPost).
func humanCaller(name string) Caller {
	return Caller{Identity: HumanRealm + ":" + name, Kind: KindHuman, Label: name, Owner: HumanRealm + ":" + name, session: true}
}

// SignIn checks a human's name and password and opens a session. Failed
// attempts are counted per name and per client address; past the limit the
// answer is rate_limited, even for the right password, until enough of the
// failures are older than signInWindow (reserveSignIn).
//
// The attempt is counted before its password is checked: reserveSignIn
// takes one unit of every counter, in one transaction, or refuses, so of a
// burst of concurrent attempts at most the limit reach bcrypt (counting
// after bcrypt let a burst of 30 check 30 passwords). A wrong password
// keeps its units, which are its failure; the right one gives them back
// (releaseSignIn, in the session's transaction), so the counters still
// count failures only.
//
// Reading: an attempt that cannot finish (its deadline passes during
// bcrypt, the database goes away) keeps its units, as a failure: the
// throttle errs on the side of counting.
func (f *Forum) SignIn(ctx context.Context, name, password, client string) (Session, error) {
	keys := signInKeys(name, client)
	now := f.now().UTC()
	window := now.Truncate(signInWindow)
	if err := f.reserveSignIn(ctx, keys, now); err != nil {
		return Session{}, err
	}
	var user models.User
	err := f.db.WithContext(ctx).Where("name = ?", name).First(&user).Error
	if err != nil && !errors.Is(err, gorm.ErrRecordNotFound) {
		return Session{}, fmt.Errorf("sign in: %w", err)
	}
	hash := []byte(user.PasswordHash)
	if user.ID == 0 {
		hash = dummyHash // spend the same time on an unknown name
	}
	if checkPassword(hash, []byte(password)) != nil || user.ID == 0 {
		return Session{}, Refuse(TokenInvalid, "unknown name or wrong password").On("password")
	}
	var out Session
	err = f.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := releaseSignIn(tx, keys, window); err != nil {
			return err
		}
		out, err = f.openSession(tx, user)
		return err
	})
	if err != nil {
		return Session{}, fmt.Errorf("sign in: %w", err)
	}
	return out, nil
}

// checkPassword is bcrypt's comparison; a variable so that the tests can
// count the passwords a burst of attempts gets checked.
var checkPassword = bcrypt.CompareHashAndPassword

var dummyHash, _ = bcrypt.GenerateFromPassword([]byte("parley: no such user"), bcrypt.DefaultCost)

// signInKey is one counter of failed sign-ins and how many failures it
// allows per signInWindow.
type signInKey struct {
	key     string
	allowed int
}

// signInKeys are the counters a sign-in is checked against. The tight one
// is per account and client: guessing ada's password from one place stops
// after 5 tries, while ada, signing in from the same place after someone
// mistyped another name, is not locked out. Looser ones bound a client
// trying many accounts (50) and an account tried from many clients (100),
// without letting anyone lock an account out with a handful of tries.
func signInKeys(name, client string) []signInKey {
	return []signInKey{
		{"account:" + name + "|client:" + client, 5},
		{"client:" + client, 50},
		{"name:" + name, 100},
	}
}

// reserveSignIn counts one attempt in each of keys' counters, in one
// transaction, or refuses rate_limited naming the first counter that is
// full, counting nothing.
//
// A counter is a sliding window of signInWindow, kept as fixed windows: an
// attempt is checked against its own window's count plus the window
// before's, in proportion to how much of that window is still within the
// last signInWindow, rounded up. Fixed windows alone let a guesser try
// five passwords at 11:14:59 and five more at 11:15:00.
//
// Each counter is taken by one conditional upsert: the row is locked
// (PostgreSQL) or the database is (SQLite), and the count is raised only
// while it is under the room the earlier window leaves, so two concurrent
// attempts never both take the last unit. The earlier window's count only
// ever falls (releaseSignIn), so reading it first errs on the side of
// counting. A counter's first attempt of a window deletes the windows
// before the one it still carries.
func (f *Forum) reserveSignIn(ctx context.Context, keys []signInKey, now time.Time) error {
	window := now.Truncate(signInWindow)
	prev := window.Add(-signInWindow)
	var full *signInKey
	fullRoom := 0
	counts := map[signInCount]int{}
	err := f.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		names := make([]string, len(keys))
		for i, k := range keys {
			names[i] = k.key
		}
		var rows []signInCount
		err := tx.Raw("SELECT key, window_start, count FROM sign_in_failures WHERE key IN ? AND window_start >= ?",
			names, prev.Unix()).Scan(&rows).Error
		if err != nil {
			return err
		}
		for _, r := range rows {
			counts[signInCount{Key: r.Key, WindowStart: r.WindowStart}] = r.Count
		}
		for i, k := range keys {
			room := k.allowed - carried(counts[signInCount{Key: k.key, WindowStart: prev.Unix()}], now.Sub(window))
			var counted []int
			if room > 0 {
				err = tx.Raw(`INSERT INTO sign_in_failures (key, window_start, count) VALUES (?, ?, 1)
					ON CONFLICT (key, window_start) DO UPDATE SET count = sign_in_failures.count + 1
					WHERE sign_in_failures.count < ?
					RETURNING count`, k.key, window.Unix(), room).Scan(&counted).Error
				if err != nil {
					return err
				}
			}
			if len(counted) == 0 {
				full, fullRoom = &keys[i], room
				return errSignInFull
			}
			if counted[0] == 1 {
				if err := tx.Exec("DELETE FROM sign_in_failures WHERE key = ? AND window_start < ?", k.key, prev.Unix()).Error; err != nil {
					return err
				}
			}
		}
		return nil
	})
	if full != nil {
		wait := full.waitFull(counts[signInCount{Key: full.key, WindowStart: window.Unix()}], fullRoom,
			counts[signInCount{Key: full.key, WindowStart: prev.Unix()}], now.Sub(window))
		retry := int((wait + time.Second - 1) / time.Second)
		r := Refuse(RateLimited, "too many failed sign-ins; try again in %d minutes", (retry+59)/60)
		r.RetryAfter = max(retry, 1)
		return r
	}
	if err != nil {
		return fmt.Errorf("sign in: %w", err)
	}
	return nil
}

// signInCount is one row of sign_in_failures.
type signInCount struct {
	Key         string
	WindowStart int64
	Count       int
}

// carried is how many of the earlier window's failures still count, when
// into is how far into its own window an attempt is.
func carried(prev int, into time.Duration) int {
	left := signInWindow - into // of the earlier window, still in the last signInWindow
	return int((int64(prev)*int64(left) + int64(signInWindow) - 1) / int64(signInWindow))
}

// waitFull is wait for a counter whose upsert found it full at room, read
// with cur failures in this window: concurrent attempts may have filled
// the window since it was read, so it holds at least room.
func (k signInKey) waitFull(cur, room, prev int, into time.Duration) time.Duration {
	return k.wait(max(cur, room), prev, into)
}

// wait is how long until k, full now with cur failures in this window and
// prev in the one before, admits an attempt again if nothing else is
// tried: until the earlier window's share falls below the room left, or,
// when this window alone fills the counter, until its own share does in
// the next one. Full means cur + carried(prev, into) >= k.allowed, so
// cur is at least 1 whenever the second case divides by it.
func (k signInKey) wait(cur, prev int, into time.Duration) time.Duration {
	if cur < k.allowed && prev > 0 {
		// carried(prev, e) <= allowed-1-cur from e on.
		e := signInWindow - time.Duration(int64(signInWindow)*int64(k.allowed-1-cur)/int64(prev))
		return max(e-into, 0)
	}
	next := signInWindow - time.Duration(int64(signInWindow)*int64(k.allowed-1)/int64(cur))
	return signInWindow - into + next
}

// errSignInFull rolls back a reservation that found a counter full.
var errSignInFull = errors.New("sign-in counter full")

// releaseSignIn gives back the units reserveSignIn took for an attempt
// that turned out right.
func releaseSignIn(tx *gorm.DB, keys []signInKey, window time.Time) error {
	for _, k := range keys {
		err := tx.Exec("UPDATE sign_in_failures SET count = count - 1 WHERE key = ? AND window_start = ? AND count > 0",
			k.key, window.Unix()).Error
		if err != nil {
			return err
		}
	}
	return nil
}

func (f *Forum) openSession(db *gorm.DB, user models.User) (Session, error) {
	token, csrf := randomHex(32), randomHex(32)
	sum := sha256.Sum256([]byte(token))
	now := f.timestamp()
	row := models.Session{TokenHash: sum[:], UserID: user.ID, CSRF: csrf, CreatedAt: now, ExpiresAt: now.Add(SessionLifetime)}
	if err := db.Create(&row).Error; err != nil {
		return Session{}, fmt.Errorf("open session: %w", err)
	}
	if err := db.Where("user_id = ? AND expires_at < ?", user.ID, now).Delete(&models.Session{}).Error; err != nil {
		return Session{}, fmt.Errorf("open session: %w", err)
	}
	return Session{Token: token, CSRF: csrf, Caller: humanCaller(user.Name)}, nil
}

// SessionCaller resolves a session cookie to its human and CSRF token.
func (f *Forum) SessionCaller(ctx context.Context, token string) (Session, error) {
	if token == "" {
		return Session{}, Refuse(TokenMissing, "sign in first")
	}
	sum := sha256.Sum256([]byte(token))
	var row struct {
		models.Session
		Name    string
		WroteAt *string `gorm:"->"`
	}
	q := f.db.WithContext(ctx).Table("sessions").Select("sessions.*, users.name")
	if f.reads != nil {
		// The WAL position a recent writer's reads need (replicas.go).
		q = q.Select("sessions.*, users.name, "+recentWriteSQL("'"+HumanRealm+":' || users.name")+" AS wrote_at",
			f.now().Add(-f.reads.readYourWritesWindow()).UTC())
	}
	err := q.Joins("JOIN users ON users.id = sessions.user_id").
		Where("sessions.token_hash = ? AND sessions.expires_at > ?", sum[:], f.timestamp()).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return Session{}, Refuse(TokenInvalid, "your session has ended; sign in again")
	}
	if err != nil {
		return Session{}, fmt.Errorf("session: %w", err)
	}
	who := humanCaller(row.Name)
	if row.WroteAt != nil {
		who.wroteAt = *row.WroteAt
	}
	return Session{Token: token, CSRF: row.CSRF, Caller: who}, nil
}

// SignOut ends a session.
func (f *Forum) SignOut(ctx context.Context, token string) error {
	sum := sha256.Sum256([]byte(token))
	if err := f.db.WithContext(ctx).Where("token_hash = ?", sum[:]).Delete(&models.Session{}).Error; err != nil {
		return fmt.Errorf("sign out: %w", err)
	}
	return nil
}

// SetupLink prepares the first run: when no human exists it stores a new
// one-time setup token (replacing any earlier one) and returns it; once a
// human exists it returns "".
func (f *Forum) SetupLink(ctx context.Context) (string, error) {
	var token string
	err := f.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var users int64
		if err := tx.Model(&models.User{}).Count(&users).Error; err != nil || users > 0 {
			return err
		}
		if err := tx.Where("1 = 1").Delete(&models.SetupToken{}).Error; err != nil {
			return err
		}
		token = randomHex(24)
		sum := sha256.Sum256([]byte(token))
		now := f.timestamp()
		return tx.Create(&models.SetupToken{TokenHash: sum[:], CreatedAt: now, ExpiresAt: now.Add(setupLifetime)}).Error
	})
	if err != nil {
		return "", fmt.Errorf("setup link: %w", err)
	}
	return token, nil
}

// CheckSetup reports whether a setup token is valid now.
func (f *Forum) CheckSetup(ctx context.Context, token string) error {
	return f.checkSetup(f.db.WithContext(ctx), token)
}

func (f *Forum) checkSetup(db *gorm.DB, token string) error {
	sum := sha256.Sum256([]byte(token))
	var n int64
	if err := db.Model(&models.SetupToken{}).Where("token_hash = ? AND expires_at > ?", sum[:], f.timestamp()).Count(&n).Error; err != nil {
		return fmt.Errorf("setup: %w", err)
	}
	if n == 0 || strings.TrimSpace(token) == "" {
		return Refuse(TokenInvalid, "this setup link is unknown, used or expired; restart the server for a new one while no human exists")
	}
	return nil
}

// CompleteSetup creates the first human account with a setup token, uses
// the token up, and signs the new human in.
func (f *Forum) CompleteSetup(ctx context.Context, token, name, password string) (Session, error) {
	var out Session
	err := f.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := f.checkSetup(tx, token); err != nil {
			return err
		}
		user, err := f.addUser(tx, name, password)
		if err != nil {
			return err
		}
		if err := tx.Where("1 = 1").Delete(&models.SetupToken{}).Error; err != nil {
			return err
		}
		out, err = f.openSession(tx, user)
		return err
	})
	if err != nil {
		return Session{}, fmt.Errorf("setup: %w", err)
	}
	return out, nil
}
