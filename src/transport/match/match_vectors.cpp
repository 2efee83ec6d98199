// SPDX-License-Identifier: BSD-3-Clause
#include "transport/match/match_vectors.hpp"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <set>
#include <sstream>

namespace hashi::match::vectors {

namespace {

bool same_recv(const posted_recv& a, const posted_recv& b)
{
    return a.cookie == b.cookie && a.source == b.source && a.tag == b.tag && a.ignore == b.ignore &&
        a.capacity == b.capacity && a.persistent == b.persistent;
}

bool same_msg(const arrived_msg& a, const arrived_msg& b)
{
    return a.cookie == b.cookie && a.source == b.source && a.tag == b.tag && a.data == b.data && a.length == b.length;
}

// Parsing ///////////////////////////////////////////////////////////////

struct field {
    std::string_view key;
    std::string_view value;
    bool used = false;
};

// One line cut into its verb and fields, with the error to report about
// it. The first problem found wins; later calls keep it.
class line_reader {
public:
    line_reader(std::string_view file, int line) : file_(file), line_(line) { }

    bool split(std::string_view text)
    {
        std::vector<std::string_view> words;
        std::size_t at = 0;
        while (at < text.size()) {
            while (at < text.size() && (text[at] == ' ' || text[at] == '\t' || text[at] == '\r')) {
                ++at;
            }
            std::size_t end = at;
            while (end < text.size() && text[end] != ' ' && text[end] != '\t' && text[end] != '\r') {
                ++end;
            }
            if (end > at) {
                words.push_back(text.substr(at, end - at));
            }
            at = end;
        }
        if (words.empty()) {
            return false;
        }
        verb_ = words[0];
        for (std::size_t i = 1; i < words.size(); ++i) {
            const std::size_t eq = words[i].find('=');
            if (eq == std::string_view::npos) {
                bare_.push_back(words[i]);
            } else if (eq == 0) {
                fail("field '" + std::string(words[i]) + "' has no name");
            } else {
                fields_.push_back({words[i].substr(0, eq), words[i].substr(eq + 1)});
            }
        }
        for (std::size_t i = 0; i < fields_.size(); ++i) {
            for (std::size_t j = 0; j < i; ++j) {
                if (fields_[i].key == fields_[j].key) {
                    fail("field '" + std::string(fields_[i].key) + "' given twice");
                }
            }
        }
        return true;
    }

    [[nodiscard]] std::string_view verb() const { return verb_; }
    [[nodiscard]] const std::vector<std::string_view>& bare() const { return bare_; }
    [[nodiscard]] bool has(std::string_view key) const
    {
        return std::ranges::any_of(fields_, [&](const field& f) { return f.key == key; });
    }

    void fail(const std::string& what)
    {
        if (error_.empty()) {
            error_ = std::string(file_) + ":" + std::to_string(line_) + ": " + what;
        }
    }
    [[nodiscard]] const std::string& error() const { return error_; }
    [[nodiscard]] int line() const { return line_; }

    std::optional<std::uint64_t> number(std::string_view key, bool required)
    {
        const std::optional<std::string_view> v = take(key, required);
        if (!v) {
            return std::nullopt;
        }
        return to_number(key, *v);
    }
    std::uint64_t number(std::string_view key, std::uint64_t fallback) { return number(key, false).value_or(fallback); }
    std::optional<source_t> source(std::string_view key, bool required)
    {
        const std::optional<std::string_view> v = take(key, required);
        if (!v) {
            return std::nullopt;
        }
        if (*v == "any") {
            return any_source;
        }
        return to_number(key, *v);
    }
    std::optional<bool> flag(std::string_view key, bool required)
    {
        const std::optional<std::uint64_t> v = number(key, required);
        if (v && *v > 1) {
            fail("field '" + std::string(key) + "' must be 0 or 1");
            return std::nullopt;
        }
        if (!v) {
            return std::nullopt;
        }
        return *v == 1;
    }
    std::vector<std::uint64_t> list(std::string_view key)
    {
        std::vector<std::uint64_t> out;
        const std::optional<std::string_view> v = take(key, true);
        if (!v) {
            return out;
        }
        std::string_view rest = *v;
        for (;;) {
            const std::size_t comma = rest.find(',');
            out.push_back(to_number(key, rest.substr(0, comma)));
            if (comma == std::string_view::npos) {
                break;
            }
            rest.remove_prefix(comma + 1);
        }
        return out;
    }

    // Call once every field the verb knows has been taken.
    void no_more(std::size_t bare_allowed = 0)
    {
        for (const field& f : fields_) {
            if (!f.used) {
                fail("unknown field '" + std::string(f.key) + "' for '" + std::string(verb_) + "'");
            }
        }
        if (bare_.size() > bare_allowed) {
            fail("unexpected word '" + std::string(bare_[bare_allowed]) + "' after '" + std::string(verb_) + "'");
        }
    }

    std::uint64_t to_number(std::string_view key, std::string_view v)
    {
        std::uint64_t n = 0;
        int base = 10;
        if (v.size() > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X')) {
            v.remove_prefix(2);
            base = 16;
        }
        const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n, base);
        if (v.empty() || ec != std::errc {} || end != v.data() + v.size()) {
            fail("field '" + std::string(key) + "': '" + std::string(v) + "' is not a 64-bit number");
        }
        return n;
    }

private:
    std::optional<std::string_view> take(std::string_view key, bool required)
    {
        for (field& f : fields_) {
            if (f.key == key) {
                f.used = true;
                return f.value;
            }
        }
        if (required) {
            fail("'" + std::string(verb_) + "' needs the field '" + std::string(key) + "'");
        }
        return std::nullopt;
    }

    std::string_view file_;
    int line_;
    std::string_view verb_;
    std::vector<std::string_view> bare_;
    std::vector<field> fields_;
    std::string error_;
};

// The cookie of claim/cancel/remove: the one bare number after the verb.
std::uint64_t positional_cookie(line_reader& r)
{
    if (r.bare().size() != 1) {
        r.fail("'" + std::string(r.verb()) + "' takes one cookie, as in '" + std::string(r.verb()) + " 5'");
        return 0;
    }
    return r.to_number("cookie", r.bare()[0]);
}

void read_message_checks(line_reader& r, expectation& e)
{
    e.source = r.source("src", false);
    e.tag = r.number("tag", false);
    e.length = r.number("len", false);
    e.data = r.number("data", false);
}

// The operation a line names, with its fields.
bool read_step(line_reader& r, step& s)
{
    const std::string_view v = r.verb();
    s.line = r.line();
    if (v == "post") {
        s.what = op::post;
        s.recv.cookie = r.number("cookie", true).value_or(0);
        s.recv.source = r.source("src", true).value_or(any_source);
        s.recv.tag = r.number("tag", true).value_or(0);
        s.recv.ignore = r.number("ignore", std::uint64_t {0});
        s.recv.capacity = r.number("cap", std::uint64_t {0});
        s.recv.persistent = r.flag("multi", false).value_or(false);
        s.expect.what = expectation::kind::queued; // to be replaced by the expect line
    } else if (v == "arrive") {
        s.what = op::arrive;
        s.msg.cookie = r.number("cookie", true).value_or(0);
        s.msg.source = r.source("src", true).value_or(any_source);
        s.msg.tag = r.number("tag", true).value_or(0);
        s.msg.length = r.number("len", std::uint64_t {0});
        s.msg.data = r.number("data", std::uint64_t {0});
        s.expect.what = expectation::kind::queued;
    } else if (v == "peek") {
        s.what = op::peek;
        s.source = r.source("src", true).value_or(any_source);
        s.tag = r.number("tag", true).value_or(0);
        s.ignore = r.number("ignore", std::uint64_t {0});
        s.claim_cookie = r.number("claim", false);
        s.expect.what = expectation::kind::no_message;
    } else if (v == "claim" || v == "cancel" || v == "remove") {
        s.what = v == "claim" ? op::claim : v == "cancel" ? op::cancel : op::remove;
        s.cookie = positional_cookie(r);
        s.expect.what = v == "claim" ? expectation::kind::no_message : expectation::kind::boolean;
        r.no_more(1);
        return true;
    } else if (v == "fail") {
        s.what = op::fail;
        s.source = r.source("src", true).value_or(any_source);
        s.expect.what = expectation::kind::failed;
    } else if (v == "renumber") {
        s.what = op::renumber;
        s.source = r.source("src", true).value_or(any_source);
        s.cookies = r.list("msg");
    } else if (v == "depth") {
        s.what = op::depth;
        s.posted = r.number("posted", true).value_or(0);
        s.unexpected = r.number("unexpected", true).value_or(0);
    } else {
        r.fail("unknown line '" + std::string(v) + "'");
        return false;
    }
    r.no_more();
    return true;
}

bool wants_expect(op o)
{
    return o != op::renumber && o != op::depth;
}

// An `expect` line, checked against the operation it follows.
void read_expect(line_reader& r, step& s)
{
    expectation& e = s.expect;
    e.line = r.line();
    const std::vector<std::string_view>& bare = r.bare();
    const std::string_view first = bare.empty() ? std::string_view {} : bare[0];
    const bool post_or_arrive = s.what == op::post || s.what == op::arrive;
    const bool peek_or_claim = s.what == op::peek || s.what == op::claim;
    auto wrong = [&](std::string_view what) {
        r.fail("'expect " + std::string(what) + "' does not fit the operation on line " + std::to_string(s.line));
    };
    if (first == "queued") {
        if (!post_or_arrive) {
            wrong(first);
        }
        e.what = expectation::kind::queued;
        r.no_more(1);
    } else if (first == "match") {
        if (!post_or_arrive) {
            wrong(first);
        }
        e.what = expectation::kind::match;
        e.recv = r.number("recv", true).value_or(0);
        e.msg = r.number("msg", true).value_or(0);
        e.truncated = r.flag("trunc", true).value_or(false);
        read_message_checks(r, e);
        r.no_more(1);
    } else if (first == "peek" || first == "claim") {
        if (!(first == "peek" ? s.what == op::peek : s.what == op::claim)) {
            wrong(first);
        }
        e.what = expectation::kind::message;
        e.msg = r.number("msg", true).value_or(0);
        read_message_checks(r, e);
        r.no_more(1);
    } else if (first == "nomsg") {
        if (!peek_or_claim) {
            wrong(first);
        }
        e.what = expectation::kind::no_message;
        r.no_more(1);
    } else if (first == "failed") {
        if (s.what != op::fail) {
            wrong(first);
        }
        e.what = expectation::kind::failed;
        if (bare.size() == 2 && bare[1] == "none") {
            r.no_more(2);
        } else {
            e.failed = r.list("recv");
            r.no_more(1);
        }
    } else if (bare.empty() && (r.has("cancel") || r.has("remove"))) {
        const std::string_view key = r.has("cancel") ? "cancel" : "remove";
        if (s.what != (key == "cancel" ? op::cancel : op::remove)) {
            wrong(std::string(key) + "=");
        }
        e.what = expectation::kind::boolean;
        e.value = r.flag(key, true).value_or(false);
        r.no_more();
    } else {
        r.fail("unknown expectation; one of: queued, match, peek, claim, nomsg, cancel=, remove=, failed");
    }
}

// Formatting ////////////////////////////////////////////////////////////

std::string hex(std::uint64_t v)
{
    std::ostringstream os;
    os << "0x" << std::hex << v;
    return os.str();
}

std::string src_text(source_t s)
{
    return s == any_source ? "any" : std::to_string(s);
}

std::string list_text(const std::vector<std::uint64_t>& v)
{
    std::string out;
    for (std::size_t i = 0; i < v.size(); ++i) {
        out += (i ? "," : "") + std::to_string(v[i]);
    }
    return out;
}

std::string message_text(const arrived_msg& m)
{
    return "msg=" + std::to_string(m.cookie) + " src=" + src_text(m.source) + " tag=" + hex(m.tag) +
        " len=" + std::to_string(m.length) + " data=" + std::to_string(m.data);
}

std::string step_text(const step& s)
{
    switch (s.what) {
    case op::post:
        return "post cookie=" + std::to_string(s.recv.cookie) + " src=" + src_text(s.recv.source) +
            " tag=" + hex(s.recv.tag) + " ignore=" + hex(s.recv.ignore) + " cap=" + std::to_string(s.recv.capacity) +
            (s.recv.persistent ? " multi=1" : "");
    case op::arrive:
        return "arrive cookie=" + std::to_string(s.msg.cookie) + " src=" + src_text(s.msg.source) +
            " tag=" + hex(s.msg.tag) + " len=" + std::to_string(s.msg.length) + " data=" + std::to_string(s.msg.data);
    case op::peek:
        return "peek src=" + src_text(s.source) + " tag=" + hex(s.tag) + " ignore=" + hex(s.ignore) +
            (s.claim_cookie ? " claim=" + std::to_string(*s.claim_cookie) : "");
    case op::claim:
        return "claim " + std::to_string(s.cookie);
    case op::cancel:
        return "cancel " + std::to_string(s.cookie);
    case op::remove:
        return "remove " + std::to_string(s.cookie);
    case op::fail:
        return "fail src=" + src_text(s.source);
    case op::renumber:
        return "renumber src=" + src_text(s.source) + " msg=" + list_text(s.cookies);
    case op::depth:
        return "depth posted=" + std::to_string(s.posted) + " unexpected=" + std::to_string(s.unexpected);
    }
    return {};
}

std::string checks_text(const expectation& e)
{
    std::string out;
    if (e.source) {
        out += " src=" + src_text(*e.source);
    }
    if (e.tag) {
        out += " tag=" + hex(*e.tag);
    }
    if (e.length) {
        out += " len=" + std::to_string(*e.length);
    }
    if (e.data) {
        out += " data=" + std::to_string(*e.data);
    }
    return out;
}

std::string expect_text(const step& s)
{
    const expectation& e = s.expect;
    switch (e.what) {
    case expectation::kind::none:
        return {};
    case expectation::kind::queued:
        return "expect queued";
    case expectation::kind::match:
        return "expect match recv=" + std::to_string(e.recv) + " msg=" + std::to_string(e.msg) +
            " trunc=" + (e.truncated ? "1" : "0") + checks_text(e);
    case expectation::kind::message:
        return std::string(s.what == op::claim ? "expect claim" : "expect peek") + " msg=" + std::to_string(e.msg) +
            checks_text(e);
    case expectation::kind::no_message:
        return "expect nomsg";
    case expectation::kind::boolean:
        return std::string(s.what == op::cancel ? "expect cancel=" : "expect remove=") + (e.value ? "1" : "0");
    case expectation::kind::failed:
        return e.failed.empty() ? "expect failed none" : "expect failed recv=" + list_text(e.failed);
    }
    return {};
}

// Running ///////////////////////////////////////////////////////////////

bool checks_hold(const expectation& e, const arrived_msg& m)
{
    return (!e.source || *e.source == m.source) && (!e.tag || *e.tag == m.tag) &&
        (!e.length || *e.length == m.length) && (!e.data || *e.data == m.data);
}

std::string result_text(const std::optional<match_result>& r)
{
    if (!r) {
        return "queued";
    }
    return "match recv=" + std::to_string(r->recv.cookie) + " trunc=" + (r->truncated ? "1 " : "0 ") +
        message_text(r->msg);
}

std::string message_result_text(const std::optional<arrived_msg>& m)
{
    return m ? message_text(*m) : std::string("nomsg");
}

bool match_holds(const expectation& e, const std::optional<match_result>& r)
{
    if (e.what == expectation::kind::queued) {
        return !r;
    }
    return r && r->recv.cookie == e.recv && r->msg.cookie == e.msg && r->truncated == e.truncated &&
        checks_hold(e, r->msg);
}

bool message_holds(const expectation& e, const std::optional<arrived_msg>& m)
{
    if (e.what == expectation::kind::no_message) {
        return !m;
    }
    return m && m->cookie == e.msg && checks_hold(e, *m);
}

} // namespace

bool step::operator==(const step& o) const
{
    expectation a = expect;
    expectation b = o.expect;
    a.line = b.line = 0;
    return what == o.what && same_recv(recv, o.recv) && same_msg(msg, o.msg) && source == o.source && tag == o.tag &&
        ignore == o.ignore && claim_cookie == o.claim_cookie && cookie == o.cookie && cookies == o.cookies &&
        posted == o.posted && unexpected == o.unexpected && a == b;
}

parse_result parse(std::string_view text, std::string_view file)
{
    parse_result out;
    scenario* open = nullptr;
    step* awaiting = nullptr; // an operation whose expect line is due
    std::set<std::string, std::less<>> names;
    int line = 0;
    auto fail = [&](int at, const std::string& what) {
        out.error = std::string(file) + ":" + std::to_string(at) + ": " + what;
        out.scenarios.clear();
        return out;
    };

    while (!text.empty()) {
        ++line;
        const std::size_t nl = text.find('\n');
        std::string_view raw = text.substr(0, nl);
        text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
        raw = raw.substr(0, raw.find('#'));

        line_reader r(file, line);
        if (!r.split(raw)) {
            continue;
        }
        if (!r.error().empty()) {
            out.error = r.error();
            out.scenarios.clear();
            return out;
        }
        const std::string_view verb = r.verb();

        if (awaiting && verb != "expect") {
            return fail(
                line, "the operation on line " + std::to_string(awaiting->line) + " needs an 'expect' line next");
        }

        if (verb == "scenario") {
            if (open) {
                return fail(line,
                    "scenario '" + open->name + "' (line " + std::to_string(open->line) +
                        ") has no 'end' before this one");
            }
            if (r.bare().size() != 1) {
                return fail(line, "'scenario' takes one name without spaces");
            }
            r.no_more(1);
            const std::string name(r.bare()[0]);
            if (!names.insert(name).second) {
                return fail(line, "scenario name '" + name + "' used twice");
            }
            out.scenarios.push_back(scenario {name, line, {}});
            open = &out.scenarios.back();
        } else if (verb == "end") {
            if (!open) {
                return fail(line, "'end' outside a scenario");
            }
            r.no_more();
            open = nullptr;
        } else if (verb == "expect") {
            if (!awaiting) {
                return fail(line, "'expect' does not follow an operation that returns something");
            }
            read_expect(r, *awaiting);
            awaiting = nullptr;
        } else {
            if (!open) {
                return fail(line, "'" + std::string(verb) + "' outside a scenario");
            }
            step s;
            read_step(r, s);
            if (r.error().empty()) {
                open->steps.push_back(std::move(s));
                if (wants_expect(open->steps.back().what)) {
                    awaiting = &open->steps.back();
                }
            }
        }
        if (!r.error().empty()) {
            out.error = r.error();
            out.scenarios.clear();
            return out;
        }
    }
    if (awaiting) {
        return fail(line, "the operation on line " + std::to_string(awaiting->line) + " needs an 'expect' line next");
    }
    if (open) {
        return fail(line, "scenario '" + open->name + "' (line " + std::to_string(open->line) + ") has no 'end'");
    }
    return out;
}

parse_result load(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        parse_result out;
        out.error = path + ": cannot open";
        return out;
    }
    std::ostringstream text;
    text << in.rdbuf();
    return parse(text.str(), path);
}

std::string format(const scenario& s)
{
    std::string out = "scenario " + s.name + "\n";
    for (const step& st : s.steps) {
        out += step_text(st) + "\n";
        if (st.expect.what != expectation::kind::none) {
            out += expect_text(st) + "\n";
        }
    }
    out += "end\n";
    return out;
}

std::optional<std::string> run(match_backend& backend, const scenario& s, std::string_view file)
{
    for (const step& st : s.steps) {
        bool ok = true;
        std::string got;
        switch (st.what) {
        case op::post:
        case op::arrive: {
            const std::optional<match_result> r = st.what == op::post ? backend.post(st.recv) : backend.arrive(st.msg);
            ok = match_holds(st.expect, r);
            got = result_text(r);
            break;
        }
        case op::peek:
        case op::claim: {
            const std::optional<arrived_msg> m = st.what == op::peek
                ? backend.peek(st.source, st.tag, st.ignore, st.claim_cookie)
                : backend.claim(st.cookie);
            ok = message_holds(st.expect, m);
            got = message_result_text(m);
            break;
        }
        case op::cancel:
        case op::remove: {
            const bool v = st.what == op::cancel ? backend.cancel(st.cookie) : backend.remove_posted(st.cookie);
            ok = v == st.expect.value;
            got = v ? "1" : "0";
            break;
        }
        case op::fail: {
            std::vector<std::uint64_t> cookies;
            for (const posted_recv& r : backend.fail_source(st.source)) {
                cookies.push_back(r.cookie);
            }
            ok = cookies == st.expect.failed;
            got = cookies.empty() ? "none" : list_text(cookies);
            break;
        }
        case op::renumber:
            backend.renumber_unexpected(st.cookies, st.source);
            break;
        case op::depth: {
            const std::size_t p = backend.posted_depth();
            const std::size_t u = backend.unexpected_depth();
            ok = p == st.posted && u == st.unexpected;
            got = "posted=" + std::to_string(p) + " unexpected=" + std::to_string(u);
            break;
        }
        }
        if (!ok) {
            const std::string wanted = st.what == op::depth ? step_text(st) : expect_text(st);
            std::ostringstream report;
            report << file << ":" << (st.expect.line ? st.expect.line : st.line) << ": scenario " << s.name
                   << ": after '" << step_text(st) << "' expected '" << wanted << "', got '" << got << "'";
            return report.str();
        }
    }
    return std::nullopt;
}

} // namespace hashi::match::vectors
