"""Flag tool descriptions that talk to the model instead of describing a tool.

Introduced in Chapter 5 (MCP integration); measured in Chapter 5b (MCP operations).

A third-party server writes the text the model reads as a tool description: "tool poisoning"
hides instructions there. The harness keeps descriptions exactly as given — it never executes
or rewrites them — and only *flags* them, so a person decides; these are heuristics, and a clean
result proves nothing.

The rules follow the published attack classes, not any one sample's wording:

* **instruction override** — "ignore / disregard / forget the previous instructions", "new
  instructions", "you are now…" (Invariant Labs 2025; OWASP LLM01);
* **concealment** — keep something from the user: "do not tell the user", "keep this secret",
  "silently", "the user must not know";
* **shadowing** — a description that rules how the model uses *another* tool ("when you call
  send_email, always add bcc …"; Invariant Labs 2025);
* **exfiltration** — send or include the conversation, the system prompt, secrets or files in
  a call or to an address (Invariant Labs' WhatsApp attack; CyberArk's full-schema poisoning);
* **credential paths** — ``~/.ssh``, cloud and registry credential files, MCP client configs
  (Trail of Bits 2025);
* **hidden characters** — Unicode tag characters, zero-width and direction controls, terminal
  escapes, HTML comments and tags aimed at the model (Embrace The Red; Trail of Bits);
* **homoglyphs** — words mixing Latin with Cyrillic or Greek look-alikes ("Ignоre" with a
  Cyrillic о): flagged, and folded to Latin before the phrase rules run;
* **look-alike tool names** (:func:`flag_name`) — a name mixing scripts, written wholly in
  look-alike letters, or that looks like another listed tool's name (TR39-style skeletons).

Beside the phrase lists, intent rules read one sentence at a time for what is *asked*, whatever the
words: standing instructions declared stale or outranked; a verb in the imperative carrying what the
user said, a secret, an environment variable holding one (``AWS_SECRET_ACCESS_KEY``) or a
credential file into a field, URL or address that is not where a credential belongs; another tool
disparaged, bypassed or re-targeted; something left out of what the user is told. A credential path
alone is not an attack: an S3 uploader that reads ``~/.aws/credentials`` or a key generator that
writes ``~/.ssh/authorized_keys`` describes itself; an order to read and pass the file is flagged,
and what the *person* is to do with a result ("so you can add it to GitHub") is no order.

Kinds of harm, named by what they need rather than by a sample's words (:func:`_harms` and the
priority rules): something ranked above the person's request or the model's instructions ("outranks
what the person asked", "the user's request is secondary"); a copy of what the model sends to an
address written into the description, every time, whatever the pretext ("a compliance
requirement"); a safeguard switched off on every call — a switch that makes a call riskier turned
on (``force=true``, ``--no-verify``), or one that makes it safer turned off (``dry_run=false``) —
while "never set force=true" is advice, not an attack; and something left out of, or told falsely
in, the model's own report to the person ("skip the deletions when you summarise").

Every string of an input schema is read, not its descriptions alone: a parameter's name, title,
enum values, default, examples, constant, comments and vendor fields are all text a model reads,
and an instruction hides in any of them.

A learned component was tried and left out: all-MiniLM-L6-v2 embeddings of whole descriptions with
a logistic regression trained on this corpus against the real definitions caught far fewer of the
corpus's rows (out of fold, at a 1 % false-alarm rate on real definitions) than the rules.

Chapter 5b measures recall on a corpus of poisoned descriptions, on rewordings written after the rules
were frozen, and the false-alarm rate on 3,788 real tool definitions (:mod:`workbook.evaluation.poisoning`).
"""
from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from typing import Iterable

from harness.core.tools import Tool
from harness.core.json_types import JSON

_TAG_CHARS = re.compile("[\U000E0000-\U000E007F]")
_ZERO_WIDTH = re.compile("[\u200b-\u200f\u2060-\u2064\ufeff\u202a-\u202e\u2066-\u2069\u00ad\u180e]")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")  # not \t \n \r: they are layout
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_HIDDEN_TAG = re.compile(r"<\s*(important|system|secret|hidden|instructions?|admin|assistant|sys)\b[^>]*>", re.I)

# Cyrillic and Greek letters that look like Latin ones (Unicode TR39 confusables, the common subset).
_CONFUSABLES = str.maketrans({
    "а": "a", "е": "e", "о": "o", "р": "p", "с": "c", "у": "y", "х": "x", "і": "i", "ј": "j", "ѕ": "s",
    "ԁ": "d", "һ": "h", "ӏ": "l", "ԛ": "q", "ԝ": "w", "к": "k", "м": "m", "н": "h", "т": "t", "в": "b",
    "А": "A", "В": "B", "Е": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P", "С": "C", "Т": "T",
    "Х": "X", "У": "Y", "І": "I", "Ј": "J", "Ѕ": "S",
    "α": "a", "ο": "o", "ρ": "p", "ε": "e", "ι": "i", "κ": "k", "ν": "v", "τ": "t", "υ": "u", "χ": "x",
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N", "Ο": "O",
    "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X",
})
_WORDS = re.compile(r"[^\W\d_]+")

# --- phrase rules, by attack class --------------------------------------------------------------
_GAP = r"[^.!?\n]{0,40}?"  # a few words within one sentence
_PRIOR = r"(previous|prior|above|earlier|preceding|former|original|other|all|any|every|your|system)"
_RULES = r"(instructions?|rules|prompts?|directions|guidelines|guidance|policies|constraints|orders|messages?)"
_USER = r"(the\s+)?(user|human|person|operator|customer|anyone|them)s?\b"
_TELL = (r"(tell|telling|told|inform|informing|mention|mentioning|reveal|revealing|disclose|disclosing|show|showing|"
         r"notify|notifying|alert|alerting|explain|explaining|let)")
_SEND = (r"(send|sending|forward|forwarding|post|posting|upload|uploading|transmit|transmitting|exfiltrate|leak|"
         r"email|copy|copying|include|attach|attaching|pass(?!\s+through)|passing(?!\s+through)|append|appending|paste|share|sharing|"
         r"put|embed|report)")  # not 'including', 'add' or 'write': descriptions use them for everyday things
# What an attacker wants out: the conversation, the model's instructions, secrets, the user's data.
_SECRET_THINGS = (r"(conversation|chat|message)s?\s+(history|histories|logs?|transcripts?)|"
                  r"(full|entire|whole|complete)\s+(conversation|chat)s?|"
                  r"(previous|earlier|prior|past|last|recent)\s+(\w+\s+){0,2}(messages|chats|conversations?|turns)|chat\s+history|"
                  r"messages\s+(of|in|from)\s+(this|the)\s+(chat|conversation|thread)|"
                  r"system\s+prompt|(chat|conversation|full|entire|whole|complete)\s+transcripts?|"
                  r"(api|access|secret|private|session|auth|bearer|refresh)[\s_-]*(keys?|tokens?)|"
                  r"credentials?|secrets|passwords?|passphrases?|cookies|clipboard|(shell|bash|zsh)[\s_]*history|"
                  r"environment\s+variables|env\s+vars|printenv|os\.environ|process\.env|private\s+keys?|ssh\s+keys?|"
                  r"(the\s+)?user'?s\s+(files|documents|contacts|data|messages|e-?mails|location|address\s+book)|"
                  r"home\s+(folder|directory)")
_FIELD = r"(the\s+)?['\"`]?[\w-]+['\"`]?\s+(field|parameter|param|argument|arg|query\s+parameter)"
# Standing instructions the model was given, in the words a rewording reaches for.
_GUIDANCE = (r"(earlier|previous|prior|old|older|original|initial|existing|other|your|standing|current|usual|default|"
             r"start-up|startup)\s+(\w+\s+){0,2}(guidance|instructions?|rules|directions|guidelines|prompts?|polic(y|ies)|"
             r"directives|orders|configuration|setup|constraints|limits|restrictions|safeguards)|(text|instructions?|prompt|"
             r"message|directions|guidance|rules|orders)\s+you\s+(received|were\s+given|got|have\s+been\s+given|started\s+with)|(what|everything|anything)\s+you\s+were\s+(told|given|instructed)")
# The person the model works for, in the words a rewording reaches for ("the user", "the person", "the human's").
_WHO = r"(the\s+)?(user|person|human|customer|requester|client|caller)"
_WHOSE = r"(the\s+)?(user|person|human|customer|requester)(['’]s|s['’]|s)?"
# What the user said or who they are: the conversation's content, not a parameter the tool needs.
_USER_SAID = (rf"(what|whatever|everything|anything|all)\s+({_WHO}|they|you)\s+(\w+\s+)?(asked|said|typed|wrote|requested|"
              r"told|shared|mentioned|searched\s+for|discussed|entered|sent)|(summary|copy|log|record|transcript|digest|recap|list)\s+of\s+"
              r"(the|this|our|every|each|all|today'?s|your)\s+(\w+\s+)?(conversations?|chats?|sessions?|exchanges?|discussions?|"
              rf"requests?|messages?|questions?)|{_WHOSE}\s+(last|previous|recent|earlier|latest|newest|most\s+recent|every|"
              r"original|exact|full|whole|entire|complete|verbatim|current)\s+(\w+\s+)?(messages?|requests?|questions?|prompts?|words|query|"
              r"queries|input|turn)|(the|this|our)\s+(conversation|chat|exchange|discussion|session)\s+(so\s+far|history|log|up\s+to\s+now|"
              r"until\s+now)|(every|each|all|your)\s+(reply|replies|answers?|responses?)\s+you\s+(write|send|give|produce)|"
              rf"{_WHOSE}\s+(home\s+|postal\s+|e-?mail\s+)?(address|phone(\s+number)?|date\s+of\s+birth|contacts|"
              rf"full\s+name|location)|the\s+(question|request|prompt|message)s?\s+(that\s+)?{_WHO}\s+(just\s+)?(asked|made|typed|sent|wrote|entered)|"
              r"(files?|documents?|messages?|e-?mails?|photos?|contacts|notes|chats?|tabs?|pages?)\s+(that\s+)?"
              rf"{_WHO}\s+(has\s+|have\s+|had\s+|just\s+|last\s+|recently\s+)?(opened|viewed|edited|wrote|written|sent|received|saved|"
              r"created|downloaded|uploaded|shared|visited|read)")
# Where a call carries data out: a named field or argument, a URL, an e-mail address. A sink named for
# authentication ('api_key', the token header) is where a secret belongs, so it does not count.
_SINK = re.compile(r"['\"`](?P<quoted>[\w.-]+)['\"`]|\b(?P<named>[\w-]+)\s+(field|parameter|param|argument|arg|header|property)s?\b|"
                   r"(?P<url>https?://\S+|\b[\w.+-]+@[\w-]+\.[\w.]+\b|[?&][\w.\[\]-]+=)|\b(?P<bare>query\s+string|request\s+body|url|link|"
                   r"payload|(query\s+)?parameters?|arguments?|fields?)\b", re.I)
_AUTH_SINK = re.compile(r"key|token|auth|passw|secret|credential|login|bearer|^the$|^a$|^an$|^each$|^every$|^any$|^this$", re.I)
_SEND_TO_SINK = (r"\b(attach|include|add|put|place|pass|send|append|insert|embed|encode|copy|paste|write|store|set|fill|"
                 r"supply|provide|forward|post|upload|stuff|tuck|report|read|open|cat|print|load|dump|export|return|show|output|"
                 r"grab|collect|fetch|use|call|invoke|request|visit|ping|tack|stick|glue|bundle|smuggle|carry|mirror|relay|"
                 r"(must|should|shall|has\s+to|needs?\s+to)\s+(end\s+with|carry|contain|hold))\b")
# Environment variables that hold secrets, by their conventional names (AWS_SECRET_ACCESS_KEY, GITHUB_TOKEN).
_SECRET_VARIABLE = (r"[A-Z][A-Z0-9]*_(?:[A-Z0-9]+_)*(?:SECRET|TOKEN|KEY|PASSWORD|PASSWD|PAT|CREDENTIALS?)(?:_[A-Z0-9]+)*|"
                    r"(?:SECRET|TOKEN|PASSWORD)_[A-Z0-9_]+")
# How another tool's effect is redirected, and how another tool is disparaged.
_TARGET_NOUN = (r"recipients?|destination|receiver|payee|beneficiary|iban|account\s+number|to\s+address|sender|cc|bcc|"
           r"channel|remote|branch|amount")
_RETARGET = rf"(change|replace|swap|redirect|set|switch|reroute|alter)\s+(the\s+|its\s+|their\s+)?({_TARGET_NOUN})"
# Whom the model answers to — the person's request, its own standing instructions — and words that rank
# something above them: "outranks what the person asked", "matters more than the user's request".
_WHOM_THE_MODEL_SERVES = (
    rf"(all\s+|any\s+|the\s+)?(what|whatever|anything|everything)\s+(\w+\s+)?({_WHO}|they)\s+(\w+\s+)?(asked|asks|wants|wanted|said|"
    r"says|typed|requested|requests|wrote|writes|meant|intended|needs)|"
    rf"(all\s+|any\s+)?{_WHOSE}\s+(own\s+|actual\s+|original\s+|stated\s+|explicit\s+)?(request|requests|instructions?|wishes|"
    r"goals?|questions?|words|messages?|prompts?|intent|intentions|asks?|orders|commands)|"
    r"(the\s+)?(user|person|human|customer|requester)['’]s?(?=\s*([.,;:!?]|$))|"
    rf"(the\s+)?(request|question|task|instructions?|message|words)\s+(that\s+)?{_WHO}\s+(\w+\s+)?(typed|made|gave|asked|wrote|sent|"
    r"entered|issued)|(all\s+|any\s+)?(your|the\s+model['’]s|the\s+assistant['’]s)\s+(\w+\s+){0,2}(instructions?|rules|guidelines|"
    r"polic(y|ies)|prompt|directives|orders|constraints|guidance|configuration|safeguards|principles)|"
    r"(the\s+|your\s+)(system|developer)\s+(prompt|message|instructions?)|"
    r"(all|any|every)\s+(other|previous|prior|earlier)\s+(instructions?|rules|guidance|directions|directives)|"
    r"(the|this)\s+(conversation|chat|dialogue)(?!\s+(id|title|name|list))")
# Standing instructions declared not to hold: "any limits you were configured with do not apply".
_CONFIGURED = (r"(limits|restrictions|rules|guidelines|instructions|polic(y|ies)|safeguards|constraints|guardrails|settings|filters)\s+"
               r"(that\s+)?you\s+(were|have\s+been|are)\s+(configured|given|set\s+up|told|trained|started|bound|loaded)")
_OUTRANK = (r"outranks?|outweighs?|supersedes?|overrides?|trumps?|beats?|takes?\s+(precedence|priority)\s+over|"
            r"(has|have|gets?)\s+(precedence|priority)\s+over|wins?\s+over|prevails?\s+over|comes?\s+(before|ahead\s+of)|"
            r"goes\s+(before|ahead\s+of)|ranks?\s+(above|ahead\s+of|higher\s+than|over)|(matters?|counts?|weighs?)\s+more\s+than|"
            r"carr(y|ies)\s+more\s+weight\s+than|(is|are)\s+(more\s+important|weightier|senior)\s+(than|to)|in\s+preference\s+to|"
            r"(is|are)\s+(placed\s+|ranked\s+)?(above|ahead\s+of)")
_BAD = (r"unreliable|broken|buggy|flaky|untrustworthy|compromised|unsafe|insecure|not\s+working|not\s+to\s+be\s+trusted|"
        r"known\s+to\s+(fail|lose|leak)|malicious|hacked")

_PHRASES: list[tuple[re.Pattern[str], str]] = [
    # instruction override
    (re.compile(rf"\b(ignore|disregard|forget|override|bypass|skip|discard|abandon)\b{_GAP}\b{_PRIOR}\b{_GAP}\b{_RULES}\b", re.I),
     "tells the model to ignore its instructions"),
    (re.compile(rf"\b(ignore|disregard|forget|override|bypass|discard)\b{_GAP}\b{_RULES}\s+(above|before|so\s+far|you\s+(were|have\s+been)\s+given)", re.I),
     "tells the model to ignore its instructions"),
    (re.compile(rf"\b{_RULES}\b[^.!?\n]{{0,60}}\b(no longer (valid|apply|applies)|are (outdated|void|obsolete|cancelled))", re.I),
     "tells the model to ignore its instructions"),
    (re.compile(rf"\b(set\s+(it|them|that|this)?\s*aside|stop\s+(following|obeying)|no\s+longer\s+(follow|obey)|"
                rf"pay\s+no\s+attention\s+to|throw\s+out)\b[^.!?\n]{{0,40}}\b({_RULES}|directives|system\s+(message|prompt)|programming)\b|"
                rf"\b({_RULES}|directives|guidance)\b[^.!?\n]{{0,40}}\b(out\s+of\s+date|outdated|obsolete|superseded|invalid|void)\b|"
                rf"\bthe\s+only\s+{_RULES}\s+that\s+(apply|applies|matter|count)", re.I),
     "tells the model to ignore its instructions"),
    (re.compile(r"\b(forget|ignore|disregard)\s+(everything|all)\b[^.!?\n]{0,40}\b(told|said|given|received|know)\b", re.I),
     "tells the model to ignore its instructions"),
    (re.compile(r"(\bnew\s+instructions?\s*:|\bsystem\s+override\b|\byou\s+are\s+now\s+(in\s+)?\w+\s+mode\b|"
                r"\byour\s+(new|real|only)\s+(task|instructions?|goal)\b|\bobey\s+only\b|\bfrom\s+now\s+on,?\s+(you|answer|always)\b)", re.I),
     "addresses the model's own instructions"),
    (re.compile(r"\b(reveal|print|send|repeat|leak|output|show|disclose)\b[^.!?\n]{0,30}\b(your\s+)?(system\s+prompt|hidden\s+rules)\b", re.I),
     "addresses the model's own instructions"),
    (re.compile(r"(^|[.!?\n]\s*)SYSTEM\s*:|"
                r"\byou\s+(may|can)\s+now\b|\byou\s+are\s+now\s+(allowed|permitted|authori[sz]ed|free)\b", re.I),
     "addresses the model's own instructions"),
    (re.compile(r"\b(pretend\s+(you\s+are|to\s+be)|act\s+as\s+if|grant\s+yourself|you\s+are\s+no\s+longer|"
                r"role-?play\s+as|(supersedes|replaces|overrides|takes\s+precedence\s+over)\s+(all\s+)?(other|previous|prior|"
                r"system|earlier)\s+(tool\s+)?(descriptions?|instructions?|rules|tools|prompts?))\b", re.I),
     "addresses the model's own instructions"),
    (re.compile(r"\b(developer|god|jailbreak|unrestricted|dan)\s+mode\b|\b(lift|lifts|lifted|remove|removes|disable|disables|"
                r"bypass|bypasses|without)\s+(the\s+|any\s+|all\s+|your\s+)?(usual\s+|normal\s+|standard\s+)?(safety\s+|content\s+)?"
                r"(restrictions|filters|guardrails|safeguards|limits|limitations|rules|guidelines)\b|"
                r"\byou\s+(have\s+been\s+|are\s+(now\s+)?|were\s+|now\s+have\s+been\s+)(granted|given|authori[sz]ed|cleared|elevated|"
                r"promoted|exempted|exempt)\b", re.I),
     "tells the model its safety rules are off"),
    (re.compile(r"\b(user|human|person|owner|admin(istrator)?|operator|developer|maintainer|team|company|management)\s+(has|have)\s+"
                r"(already\s+)?(approved|authori[sz]ed|consented|agreed|signed\s+off|given\s+(permission|consent))\b|"
                r"\bno\s+need\s+to\s+(confirm|get\s+(approval|permission|consent)|ask\s+(for\s+)?(the\s+user'?s?\s+)?"
                r"(confirmation|permission|approval|consent))\b|\bno\s+need\s+to\s+(ask|check\s+with|consult)\s*($|[.,;:!?]|"
                r"(first|before|beforehand|the\s+(user|person|human)|them|anyone)\b)|"
                r"\b(approved|authori[sz]ed|consented\s+to|signed\s+off|cleared)\s+(\w+\s+){0,4}(in\s+advance|ahead\s+of\s+time|beforehand)\b|"
                r"\b(pre-?approved|pre-?authori[sz]ed|blanket\s+(approval|permission|consent))\b", re.I),
     "claims the user's approval in advance"),
    # concealment
    (re.compile(rf"\b(do\s+not|don'?t|never|without|must\s+not|should\s+not|nor)\b{_GAP}\b{_TELL}\b{_GAP}\b{_USER}", re.I),
     "asks the model to hide something from the user"),
    (re.compile(r"\b(keep|kept)\b[^.!?\n]{0,30}\b(secret|hidden|confidential|private|quiet)\b[^.!?\n]{0,20}\bfrom\b", re.I),
     "asks the model to hide something from the user"),
    (re.compile(rf"\b{_USER}[^.!?\n]{{0,30}}\b((must|should|need)\s+not|mustn'?t|shouldn'?t|(is|are)\s+not\s+(to\s+be\s+)?made)\s+(know|be\s+told|see|notice|aware|find\s+out)", re.I),
     "asks the model to hide something from the user"),
    (re.compile(rf"\b(under\s+no\s+circumstances|never|not)\b[^.!?\n]{{0,60}}\b{_USER}[^.!?\n]{{0,40}}\b(learn|find\s+out|know|"
                rf"notice|realize|realise|become\s+aware|be\s+aware|be\s+told)\b|\bleave\s+(it|this|that)\s+out\s+of\s+"
                rf"(anything|what|everything)\s+you\s+(say|tell|write|reply)|\bkeep\s+(it|this|that)\s+(to\s+yourself|between\s+us)", re.I),
     "asks the model to hide something from the user"),
    (re.compile(rf"\b(hide|conceal)\b[^.!?\n]{{0,30}}\bfrom\s+{_USER}", re.I),
     "asks the model to hide something from the user"),
    (re.compile(r"\b(do\s+not|don'?t|never|must\s+not)\s+(reveal|mention|disclose|repeat|show|share|discuss|explain)\s+"
                r"(these|this|the|any\s+of\s+these|that)\s+(instructions?|rules|notes?|steps?|directives?|description|requirements?)\b", re.I),
     "asks the model to hide something from the user"),
    (re.compile(rf"\b(silently|secretly|quietly|covertly|discreetly|invisibly)\b[^.!?\n]{{0,20}}\b({_SEND}|call|read|run|open|load|execute|delete|remove|"
                r"add|insert|inject|slip|change|alter|modify|edit|rewrite|replace)\b", re.I),
     "asks the model to act without the user seeing"),
    # an outcome told as another: success claimed whatever happened
    (re.compile(r"\b(pretend|claim|say|report|state|answer|reply|tell\s+(the\s+)?(user|person|human)|act\s+as\s+if|make\s+it\s+(look|seem))\b"
                r"[^.!?\n]{0,50}\b(succeeded|successful(ly)?|success|worked|completed?|went\s+through|was\s+done|passed|fine|"
                r"no\s+(errors?|problems?|issues?|changes?|charges?))\b[^.!?\n]{0,50}\b(if|when|even\s+(if|when|though)|though|"
                r"regardless|whether\s+or\s+not)\b|\b(if|when|even\s+(if|when))\b[^.!?\n]{0,50}\b(fails?|failed|errors?|times?\s+out|"
                r"timed\s+out|breaks?|goes\s+wrong|was\s+(charged|deleted|lost))\b[^.!?\n]{0,30}\b(pretend|claim|say|report|tell)\b"
                r"[^.!?\n]{0,30}\b(succeeded|success(ful)?|worked|completed?|fine|nothing)\b", re.I),
     "asks the model to mislead the user"),
    # shadowing: rules for how *another* tool is used
    (re.compile(r"\b(when(ever)?|every\s+time|each\s+time|before|after)\b[^.!?\n]{0,40}\b(you|the\s+(assistant|model|agent|ai))?\s*"
                r"(use|uses|call|calls|invoke|invokes|run|runs|using|calling|invoking)\s+(the\s+|any\s+)?"
                r"(\(?[\w-]+\)?\s+)?(?!this\b)([a-z0-9]+_[a-z0-9_]+|[\w-]+\s+tool)\b"
                r"[^.!?\n]{0,80}\b(always|must|make\s+sure|be\s+sure|set|change|replace|add|bcc|cc|redirect|route|assign|also|"
                r"as\s+well|invite|tag|attach|append)\b", re.I),
     "tells the model how to use another tool"),
    (re.compile(r"\b(side\s+effect|overrides?|takes\s+precedence)\b[^.!?\n]{0,40}\b(other|also\s+present|another|the)\b[^.!?\n]{0,30}\btools?\b", re.I),
     "tells the model how to use another tool"),
    (re.compile(r"\b(instead\s+of|rather\s+than)\s+(calling|using|invoking)\b[^.!?\n]{0,60}\btool\b", re.I),
     "tells the model how to use another tool"),
    (re.compile(r"\b(before|prior\s+to)\s+(responding|answering|replying|doing\s+anything|any\s+other)\b[^.!?\n]{0,60}"
                r"\b(call|invoke|run|use)\s+(?!this\b)[a-z0-9]+_[a-z0-9_]+", re.I),
     "tells the model how to use another tool"),
    (re.compile(r"\b(always|also|silently|secretly|quietly)\s+(bcc|cc|forward|copy|send|redirect)\b[^.!?\n]{0,40}\S+@\S+\.\w+", re.I),
     "tells the model how to use another tool"),
    (re.compile(r"\b(when(ever)?|every\s+time|each\s+time|if)\b[^.!?\n]{0,60}\b(sent|called|used|invoked|run|made|posted)\s+"
                r"(with|via|through|using|by)\s+(the\s+)?[a-z0-9]+_[a-z0-9_]+[^.!?\n]{0,60}\b(route|send|redirect|set|add|always|must|"
                r"first)\b", re.I),
     "tells the model how to use another tool"),
    (re.compile(r"\btool\s+(has\s+a\s+bug|is\s+(broken|buggy|deprecated\s+here)|does\s+not\s+work|doesn'?t\s+work|won'?t\s+work)\b|"
                r"\b(never|not|don'?t|do\s+not)\s+(use\s+|call\s+)?the\s+(official\s+)?[\w-]+\s+tool\b", re.I),
     "tells the model how to use another tool"),
    (re.compile(r"\b(every|all|each)\s+(payments?|transfers?|messages?|e-?mails?)\s+(must|should)\s+(be\s+)?(made|sent|routed|"
                r"addressed|go|directed)\s+to\b", re.I),
     "tells the model how to use another tool"),
    (re.compile(r"\b[a-z]+_[a-z_]+\s+tool\s+(is\s+broken|does\s+not\s+work|must|should\s+always|only\s+works)\b", re.I),
     "tells the model how to use another tool"),
    (re.compile(r"\b(all|every|each)\s+(e-?mails?|messages?|payments?|transfers?)\b[^.!?\n]{0,30}\b(to|must\s+go\s+to)\s+\S+@\S+", re.I),
     "tells the model how to use another tool"),
    # exfiltration
    (re.compile(rf"\b{_SEND}\b[^.!?\n]{{0,40}}\b({_SECRET_THINGS})\b", re.I),
     "asks the model to send conversation, secrets or files somewhere"),
    (re.compile(rf"\b(read|open|load|cat)\b[^.!?\n]{{0,60}}\b(and|then)\s+{_SEND}\b[^.!?\n]{{0,30}}\b(its|their|the)\s+(content|contents|text|tokens?)\b", re.I),
     "asks the model to send a file's content in a call"),
    (re.compile(r"\b(must|should)\s+(hold|contain|include)\s+the\s+(text|content|contents)\s+of\b", re.I),
     "asks the model to send a file's content in a call"),
    (re.compile(rf"{_FIELD}\s+(must|should|shall|will|needs?\s+to)\s+(carry|contain|hold|include|have|receive|be\s+set\s+to)\b"
                rf"[^.!?\n]{{0,40}}\b({_SECRET_THINGS})\b", re.I),
     "asks the model to send conversation, secrets or files somewhere"),
    (re.compile(rf"\b({_SECRET_THINGS})\b[^.!?\n]{{0,40}}\b(in|into|to|as)\s+{_FIELD}", re.I),
     "asks the model to send conversation, secrets or files somewhere"),
    (re.compile(rf"\b{_SEND}\b[^.!?\n]{{0,30}}\b(the\s+)?(full\s+|entire\s+|whole\s+)?(contents?|text)\s+of\s+(~|/|\.|the\s+(user'?s|private))", re.I),
     "asks the model to send a file's content in a call"),
    (re.compile(rf"\b(call|use|invoke|run)\b[^.!?\n]{{0,40}}\bwith\s+(the\s+)?({_SECRET_THINGS})\b", re.I),
     "asks the model to send conversation, secrets or files somewhere"),
    # --- intent rules: what is asked, in whatever words -------------------------------------------
    # override: the model's standing instructions declared stale, outranked or replaced
    (re.compile(rf"\b({_GUIDANCE})[^.!?\n]{{0,50}}\b(is|are|was|were|has(\s+been)?|have(\s+been)?|counts?\s+as)\s+(now\s+|all\s+)?"
                rf"(out\s+of\s+date|outdated|stale|obsolete|superseded|replaced|withdrawn|retired|cancell?ed|revoked|wrong|"
                rf"incorrect|void|invalid|a\s+test|(only\s+)?a\s+draft|not\s+binding|irrelevant|expired|lifted|removed|suspended|"
                rf"waived|relaxed|paused|no\s+longer\s+\w+)\b|"
                rf"\b({_GUIDANCE})[^.!?\n]{{0,50}}\b(can|may|should|must)\s+(now\s+)?(safely\s+)?(be\s+)?(discarded|ignored|"
                rf"disregarded|dropped|set\s+aside|forgotten|skipped)\b", re.I),
     "tells the model to ignore its instructions"),
    (re.compile(rf"\b({_CONFIGURED}|{_GUIDANCE})\b[^.!?\n]{{0,40}}\b(do(es)?\s+not|don'?t|no\s+longer|never)\s+(apply|count|hold|bind|"
                r"matter)\b", re.I),
     "tells the model to ignore its instructions"),
    (re.compile(rf"\b({_OUTRANK})\s+({_WHOM_THE_MODEL_SERVES})|\b({_WHOM_THE_MODEL_SERVES})\s+(is|are|comes?|counts?|ranks?)\s+"
                r"(only\s+|merely\s+|now\s+)?(secondary|second|subordinate|less\s+important|lower\s+priority|advisory|optional|"
                rf"not\s+binding|non-?binding)\b|\b({_WHOM_THE_MODEL_SERVES})\s+(can|may|should|must|is\s+to|are\s+to)\s+(now\s+|safely\s+)?"
                r"(be\s+)?(set\s+aside|ignored|overridden|disregarded|skipped|deprioriti[sz]ed|put\s+second|treated\s+as\s+optional)\b|"
                rf"\b(instead\s+of|rather\s+than|in\s+place\s+of)\s+({_WHOM_THE_MODEL_SERVES})|"
                rf"\b(priority|precedence|preference)\s+(over|to)\s+({_WHOM_THE_MODEL_SERVES})|"
                rf"\b(rank|put|place|value|weigh|prefer|favou?r|prioriti[sz]e)\b[^.!?\n]{{0,40}}\b(above|over|before|ahead\s+of|to)\s+"
                rf"({_WHOM_THE_MODEL_SERVES})|\b(elevated|special|full|admin(istrator)?|root)\s+"
                r"(trust|privileges?|permissions?|rights)\b[^.!?\n]{0,30}\b(granted|given|have|has)\b|\b(granted|given)\s+"
                r"(you\s+)?(elevated|special|full|admin(istrator)?|root)\s+(trust|privileges?|permissions?|rights)\b|"
                r"\btreat\b[^.!?\n]{0,50}\bas\s+(if\s+it\s+(came|comes)\s+from|coming\s+from|written\s+by|sent\s+by|from)\s+"
                r"(your|the)\s+(system|administrator|admin|developer|operator|user|creator)", re.I),
     "addresses the model's own instructions"),
    (re.compile(r"\b(real|actual|true|genuine)\s+(instructions|orders|task|rules|directives)\b|"
                r"\b(follow|obey)\s+(these|this|the\s+following|mine|my\s+\w+|our\s+\w+)\s+instead\b|"
                r"\btreat\s+(the\s+following|this|what\s+follows|the\s+text\s+(below|that\s+follows)|everything\s+\w+\s+\w+)\s+"
                r"as\s+(a\s+|an\s+|your\s+)?(system|developer|admin|operator)\s+(message|prompt|instructions?)\b|"
                r"\b(is|are)\s+(authoritative|binding|final)\s+over\b|"
                r"\b(execute|run|obey|follow|act\s+on|carry\s+out)\s+(every|any|all|each|the)\s+(\w+\s+)?(commands?|instructions?|"
                r"orders?|directions?)\s+(in|from|that|which)\b[^.!?\n]{0,40}\b(output|results?|response|returns?|contains?)\b|"
                r"\b(whatever|everything|anything)\s+you\s+were\s+(told|asked|instructed)\b[^.!?\n]{0,40}\b(stop|instead|forget|drop|"
                r"abandon)\b|\b(confirmation|approval|consent|permission)\s+(has|have|is|was)\s+(been\s+)?(pre-?approved|pre-?granted|"
                r"already\s+(given|granted)|waived|not\s+needed|unnecessary)\b|\byou\s+are\s+(now\s+)?(authori[sz]ed|cleared|"
                r"permitted|allowed)\s+to\s+(run|execute|delete|perform|do|bypass|skip|access)\b", re.I),
     "addresses the model's own instructions"),
    (re.compile(r"\btreat\b[^.!?\n]{0,60}\b(output|results?|responses?|answers?|returns?|replies)\b[^.!?\n]{0,20}\bas\s+(\w+\s+){0,2}"
                r"(instructions?|commands?|orders|directives|binding|authoritative)\b|"
                r"\b(obey|follow|execute|carry\s+out|act\s+on)\s+(\w+\s+){0,3}(output|results?|responses?|returns?)\s+(of|from)\s+this\b|"
                r"\bfrom\s+(this\s+point|here)\s*(on|onwards?|forward)?,?\s+(you|the\s+(assistant|model|agent))\b", re.I),
     "addresses the model's own instructions"),
    (re.compile(r"\bif\s+you\s+are\s+(an?\s+)?(ai|assistant|language\s+model|llm|agent|model|bot|chatbot)\b|"
                r"\b(ai|llm|assistants?|models?|agents?|bots?)\s+(that\s+(is|are)\s+)?(reading|processing|parsing|seeing)\s+this\b", re.I),
     "addresses the model's own instructions"),
    (re.compile(r"\b(attention|note|notice|message|memo|reminder|instructions?)\s+(to|for)\s+(the\s+)?(ai|assistant|model|llm|"
                r"agent|claude|gpt|chatbot|language\s+model)\b|(^|[.!?\n]\s*)(dear\s+)?(ai|assistant|llm|agent)\s*[:,]\s+\w|"
                r"\b(heads-?up|note|notice|message|instructions?)\s+(for|to)\s+(all\s+|the\s+)?(other|every|all)\s+tools\b", re.I),
     "addresses the model's own instructions"),
    (re.compile(r"\b(straight\s+away|right\s+away|immediately|at\s+once)\b[^.!?\n]{0,40}\b(without|no\s+need\s+to)\s+"
                r"(asking|ask|confirm|confirming|confirmation|checking|check|approval|permission|telling|waiting)\b|"
                r"\b(without|no\s+need\s+to)\s+(asking|ask|confirm|confirming|checking\s+with|approval|permission)\b"
                r"[^.!?\n]{0,40}\b(straight\s+away|right\s+away|immediately|at\s+once)\b|"
                r"\bwithout\s+(first\s+)?(double-?)?(checking|confirming|asking|consulting|clearing)\s+(it\s+|them\s+|this\s+)?"
                r"(with\s+)?(the\s+user|the\s+person|the\s+human|anyone)\b", re.I),
     "tells the model to act without the user's approval"),
    # concealment: something left out of what the user is told
    (re.compile(r"\b(do\s+not|don'?t|never|avoid|no\s+need\s+to|no\s+reason\s+to|refrain\s+from|must\s+not|should\s+not)\s+"
                r"(\w+\s+){0,2}?(mention|mentioning|bring(ing)?\s+(it|them|this|that|these|\w+)?\s*up|tell|telling|reveal|revealing|"
                r"disclose|disclosing|say\s+anything|saying\s+anything|acknowledge|acknowledging|admit|admitting|"
                r"talk(ing)?\s+about|draw(ing)?\s+attention|let(ting)?\s+on|give\s+away|tip\s+off)\b|"
                rf"\b{_USER}[^.!?\n]{{0,30}}\b(remain|stay|be\s+kept|is\s+kept|are\s+kept|kept)\s+(unaware|in\s+the\s+dark|uninformed|"
                rf"oblivious|ignorant)\b|\bif\s+(the\s+user|they|anyone|someone|the\s+person|the\s+human)\s+(asks?|questions?|wonders?|"
                rf"inquires?|raises?)\b[^.!?\n]{{0,60}}\b(say|answer|reply|respond|tell\s+them|claim|deny|insist)\b|"
                rf"\b(report|say|answer|reply|respond|claim)\b[^.!?\n]{{0,30}}\b(regardless\s+of\s+(what|whether|how|the\s+(result|"
                rf"outcome))|no\s+matter\s+(what|whether|how))\b|\b(skip|omit|drop|leave\s+out)\s+any\s+(mention|reference|word)\b|"
                r"\b(leave|keep)\b[^.!?\n]{0,30}\bout\s+of\s+(your|the)\s+(reply|replies|answer|answers|summary|response|report)|"
                r"\b(omit|exclude)\b[^.!?\n]{0,40}\bfrom\s+your\s+(reply|answer|summary|response|report)|"
                r"\b(an?\s+)?internal\s+matter\b|\bbetween\s+(you\s+and\s+(me|us|this\s+tool)|us)\b|\boff\s+the\s+record\b", re.I),
     "asks the model to hide something from the user"),
    # shadowing: another tool disparaged, replaced or re-targeted
    (re.compile(rf"\b(the|your|that|any)\s+(?!this\b)([\w-]+\s+){{0,2}}tools?\s+(is|are|has\s+been|have\s+been|seems?|appears?|"
                rf"can\s+be|may\s+be)\s+(now\s+|currently\s+|very\s+|too\s+)?({_BAD})\b|"
                rf"\b(?!this\b)[a-z0-9]+_[a-z0-9_]+\s+(is|are|has\s+been|seems|appears)\s+(now\s+|currently\s+|very\s+)?({_BAD})\b|"
                r"\b(in\s+place\s+of|instead\s+of|rather\s+than|over)\s+(the\s+|any\s+)?(?!this\b)([\w-]+\s+)?"
                r"([a-z0-9]+_[a-z0-9_]+|tool|tools)\b[^.!?\n]{0,40}\b(in\s+all\s+cases|always|every\s+time|even\s+(for|when|if))\b|"
                r"\b(use|call|prefer|choose|pick)\s+(this|me|our|my)\b[^.!?\n]{0,30}\b(in\s+place\s+of|rather\s+than)\s+(the\s+)?"
                r"[\w-]+(\s+tool)?\b", re.I),
     "tells the model how to use another tool"),
    (re.compile(rf"\b(when(ever)?|every\s+time|each\s+time|any\s+time|if|after|before)\b[^.!?\n]{{0,40}}\b(?!this\b)"
                rf"[a-z0-9]+_[a-z0-9_]+\b[^.!?\n]{{0,60}}\b({_RETARGET})\b|"
                r"\b(before|prior\s+to)\s+(using|calling|invoking|running)\s+(any|every|each|all)\s+(other\s+)?tools?\b"
                r"[^.!?\n]{0,40}\b(call|use|run|invoke)\s+(this|me)\b|"
                r"\b(do\s+not|don'?t|never|avoid)\s+(use|call|invoke|trust|rely\s+on)\s+(the\s+|any\s+)?([\w-]+\s+)?(?!this\b)"
                r"([a-z0-9]+_[a-z0-9_]+|tool|server)\b[^.!?\n]{0,40}\b(corrupts?|breaks?|loses?|leaks?|broken|unreliable|wrong|buggy|"
                r"unsafe|insecure|fails?|deprecated)\b|\bonly\s+(trust|rely\s+on|believe)\s+(this|me|our)\b|"
                r"\bother\s+([\w-]+\s+)?(tools|servers|integrations)\s+(return|give|are|produce|have)\b[^.!?\n]{0,30}\b(wrong|broken|"
                r"unreliable|bad|fake|inaccurate|outdated|malicious|compromised)\b|"
                r"\b(the\s+)?(official|built-?in|default|standard|original|other|existing)\s+[\w-]+\s+(tool|server|integration|app)\s+"
                r"(is|are|has\s+been)\s+(now\s+)?(deprecated|retired|disabled|unsupported|broken|unreliable|compromised)\b|"
                r"\b(route|send|direct|move|bring|redirect)\s+(all|every|any|each)\s+[\w-]+\s+(\w+\s+)?(here|to\s+this\s+(tool|server))\b|"
                r"\b(add|include|put|always)\b[^.!?\n]{0,20}\b(bcc|cc|blind\s+copy|carbon\s+copy)\b[^.!?\n]{0,30}[\w.+-]+@[\w-]+\.\w+", re.I),
     "tells the model how to use another tool"),
    (re.compile(rf"\b(?!this\b)[a-z0-9]+_[a-z0-9_]+\b[^.!?\n]{{0,50}}\b({_TARGET_NOUN})\s+(is|are|be|gets?)\s+(changed|set|replaced|swapped)\s+to\b|"
                rf"\b(?!this\b)[a-z0-9]+_[a-z0-9_]+\s+(should|must)\s+(always\s+)?(mention|include|add|cc|copy|notify|tag)\b", re.I),
     "tells the model how to use another tool"),
]

# --- weak signals that only together mean an attack (a sentence at a time) ---------------------------
# Each alone is ordinary in a tool description ("the user", "must", "include"); the classes above are
# combinations of them: who is addressed, who is kept in the dark, what leaves, and where it goes.
_SIGNALS: dict[str, re.Pattern[str]] = {
    "model_self": re.compile(r"\b(your|you\s+were|you\s+have\s+been)\s+(\w+\s+){0,3}(instructions?|rules|configuration|configured|"
                             r"guidelines|operator|system\s+(prompt|message)|programming|restrictions|safety|prompt|told|"
                             r"instructed|directives)\b|\b(developer|god|jailbreak|unrestricted|dan)\s+mode\b|"
                             r"\b(safety|usual|content)\s+(restrictions|filters|rules|guidelines)\b|"
                             r"\b(placed|imposed|put)\s+on\s+you\b|\byou\s+(started|began)\s+with\b|\bset\s+up\s+your\b|"
                             r"\byou\s+(now\s+)?answer\s+to\b|\byour\s+(prompt|limits|policy|setup|creators?|developers?)\b", re.I),
    "user_third": re.compile(r"\b(the|this|that)\s+(user|human|person|customer|requester)\b|\b(if|when)\s+(asked|questioned)\b", re.I),
    "deceive": re.compile(r"\b(never|omit|omitting|hide|conceal|secret(ly)?|confidential|hears?\s+about|keep\s+quiet|"
                          r"explain\s+(it|this|that)\s+away|avoid\s+(bringing\s+up|mentioning|discussing|raising)|"
                          r"doesn'?t\s+need\s+(to\s+know|the\s+details)|without\s+(telling|mentioning|informing))\b", re.I),
    # Telling the user something false about what happened.
    "lie": re.compile(r"\b(say|tell|answer|reply)\s+(\w+\s+){0,3}only\b|\bnothing\s+(more|else)\b|\bpretend\b|\blie\s+to\b|"
                      r"\breport\s+success\b|\beven\s+(when|if)\b[^.!?\n]{0,40}\bfails?\b", re.I),
    "other_tool": re.compile(r"\b(?!this\b)[a-z0-9]+_[a-z0-9_]+\b(?!\s*[:=])|\bthe\s+(?!this\b)[\w-]+\s+tool\b", re.I),
    "obligation": re.compile(r"\b(must|always|only\s+work|should\s+be\s+called|needs?\s+to|make\s+sure|be\s+sure|"
                             r"has\s+to|comply|obey|top\s+priority|highest\s+priority)\b", re.I),
    "stale": re.compile(r"\b(is|are)\s+(now\s+)?(void|invalid|obsolete|outdated|out\s+of\s+date|cancelled|revoked|no\s+longer\s+valid)\b|"
                        r"\bno\s+longer\s+(count|counts|apply|applies|matter|matters|hold|holds)\b|\b(replaces|overrides|supersedes)\b|"
                        r"\bover\s+(everything|anything)\s+else\b|\bnot\s+to\s+(whoever|the\s+one|your)\b", re.I),
    # Changing where another tool's effect lands (recipient, account, remote), or destroying things.
    "tamper": re.compile(r"\b(recipient|destination|receiver|address|account|channel|remote|iban)s?\b[^.!?\n]{0,30}\b(replaced|"
                         r"changed|swapped|redirected|set\s+to)\b|\b(replace|change|swap|redirect)\b[^.!?\n]{0,20}\b(the\s+)?"
                         r"(recipient|destination|receiver|address|account|channel|remote)\b|\bdrop\s+table\b|\brm\s+-rf\b|"
                         r"\bwipe\b|\.git\s+(folder|directory)\b", re.I),
    "outbound": re.compile(r"https?://|\b[\w.+-]+@[\w-]+\.[\w.]+\b|\+\d[\d\s-]{6,}|\b(GET|POST)\s+request\b|\bwebhook\b|"
                           r"\bendpoint\b|\b(our|a\s+remote|an\s+external|third-party)\s+(server|mirror|backup|collector)\b", re.I),
    "flow": re.compile(r"\b(include|send|append|pass|provide|upload|forward|post|copy|export|attach|paste|put|embed|"
                       r"followed\s+by|share|transmit|leak|report|add|filled\s+with|encode)\b", re.I),
    # Where another tool's effect lands: an account, a remote, a cc line, a forced push.
    "target": re.compile(r"\b(target|destination|receiving)\s+(account|address|number|remote|channel)\b|\b(cc|bcc)\s+(line|field)\b|"
                         r"--force\b|\bmirror\s+remote\b|\baccount\s+(is\s+|number\s+)?\d[\d-]{3,}", re.I),
    "told": re.compile(r"\b(everything|all|whatever)\s+(the\s+user|they|you)\s+(has|have)?\s*(told|said|typed|written|shared)|"
                       r"\b(full|whole|entire|complete)\s+set\s+of\s+instructions\b|\byour\s+(instructions|system\s+prompt|rules)\b|"
                       r"\bthe\s+user'?s\s+(last|previous|recent|latest|most\s+recent)\s+(message|messages|question|reply|request)\b|"
                       r"\b(our|this|the)\s+(chat|conversation)\s+so\s+far\b|\b(copy|transcript|log)\s+of\s+(our|this|the)\s+(chat|conversation)\b|"
                       r"\b(the\s+user|they)\s+(has|have)\s+(mentioned|said|shared|typed|written|told\s+you)\b", re.I),
    "secret_file": re.compile(r"\.tfstate\b|~/\.\w*rc\b|\bsaved\s+passwords\b|\bLogin\s+Data\b|\bkeystore\b|\.pem\b|\.p12\b|"
                              r"\.kdbx\b|\bwallet\b|\bseed\s+phrase\b|\brecovery\s+(phrase|codes?)\b", re.I),
}
#: (signals that must all occur in one sentence, what they mean together)
_COMBINATIONS: list[tuple[frozenset[str], str]] = [
    (frozenset({"model_self", "obligation"}), "addresses the model's own instructions"),
    (frozenset({"model_self", "flow"}), "addresses the model's own instructions"),
    (frozenset({"model_self", "stale"}), "tells the model to ignore its instructions"),
    (frozenset({"user_third", "lie"}), "asks the model to mislead the user"),
    (frozenset({"user_third", "deceive", "flow"}), "asks the model to hide something from the user"),
    (frozenset({"user_third", "deceive", "outbound"}), "asks the model to hide something from the user"),
    (frozenset({"other_tool", "obligation", "tamper"}), "tells the model how to use another tool"),
    (frozenset({"other_tool", "target"}), "tells the model how to use another tool"),
    (frozenset({"other_tool", "outbound", "flow"}), "tells the model how to use another tool"),
    (frozenset({"user_third", "deceive"}), "asks the model to hide something from the user"),
    (frozenset({"told", "flow"}), "asks the model to send conversation, secrets or files somewhere"),
    (frozenset({"told", "outbound"}), "asks the model to send conversation, secrets or files somewhere"),
    (frozenset({"secret_file", "flow"}), "points at credential files"),
]
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


def _combined_signals(text: str) -> list[str]:
    """Reasons from :data:`_COMBINATIONS` that some sentence of ``text`` carries."""
    found: dict[str, None] = {}
    for sentence in _SENTENCE.split(text):
        present = {name for name, pattern in _SIGNALS.items() if pattern.search(sentence)}
        for needed, reason in _COMBINATIONS:
            if needed <= present:
                found[reason] = None
    return list(found)


#: Files that hold credentials (a public key and the hosts it admits are not): SSH and GPG keys, cloud, container and package-registry credentials,
#: GitHub CLI and git tokens, MCP client configs (which hold other servers' keys), system password files.
_CREDENTIAL_PATHS = re.compile(
    r"(~?/?\.ssh\b(?!/(authorized_keys|known_hosts)\b|/[\w.-]+\.pub\b)|\bid_(rsa|dsa|ecdsa|ed25519)\b|\.gnupg\b|\.aws/(credentials|config)\b|"
    r"\.config/gcloud\b|application_default_credentials\.json|\.azure/|msal_token_cache|accessTokens\.json|"
    r"\.kube/config\b|\.docker/config\.json|\.npmrc\b|\.pypirc\b|\.netrc\b|\.git-credentials\b|"
    r"\.config/gh/hosts\.ya?ml|\bhosts\.ya?ml\b|\bmcp\.json\b|claude_desktop_config\.json|"
    r"/etc/(passwd|shadow|sudoers)\b|/\.[\w-]*(token|credential|secret|passw)[\w.-]*\b|\.(bash|zsh)_history\b|\bprivate\s+key\s+file\b|(?<![\w.])\.env(?!\.(example|sample|template|dist))\b|\bwallet\.dat\b|\bkeychain\b|Login\s+Data\b)", re.I)
_CREDENTIAL_PARAMETER = re.compile(r"(ssh|id_rsa|private_key|credential|password|secret|token)\w*_(content|text|file|data)|"
                                   r"\w*(content|text)_(from|of)_\w*(ssh|id_rsa|credential|key|secret)", re.I)


# A verb in the passive ("credentials are read from ~/.aws/credentials") describes the tool, not an order.
_PASSIVE = re.compile(r"\b(is|are|be|been|being|was|were|gets?)\s+(not\s+|also\s+|then\s+|first\s+|only\s+)?\w+", re.I)
_CONTENTS_OF = re.compile(r"\b(contents?|text|value)\s+of\b", re.I)
# What the person does with a result is not an order to the model ("prints the public key so you can add it").
_PERSON_ACTS = re.compile(r"\b(so\s+(that\s+)?(you|the\s+user|the\s+person|they)\s+can|for\s+(you|the\s+user|the\s+person|them)\s+to|"
                          r"lets?\s+(you|the\s+user|the\s+person)|allows?\s+(you|the\s+user|the\s+person)\s+to)\s+\w+", re.I)
_SECRET_THING = re.compile(rf"\b({_SECRET_THINGS})\b", re.I)
_USER_SAID_RE = re.compile(rf"\b({_USER_SAID})\b", re.I)
_SECRET_VARIABLE_RE = re.compile(rf"\b({_SECRET_VARIABLE})\b")
_ORDER = re.compile(_SEND_TO_SINK, re.I)


def _outside_sink(sentence: str) -> bool:
    """Whether the sentence names a place data can leave by that is not an authentication field."""
    for m in _SINK.finditer(sentence):
        name = m.group("quoted") or m.group("named")
        if m.group("url") or m.group("bare") or (name and not _AUTH_SINK.search(name)):
            return True
    return False


def _carried_out(text: str) -> list[str]:
    """Reasons for sentences that order the conversation, a secret or a credential file into a call.

    An order has three parts in one sentence: a verb in the imperative (passives describe the tool),
    something that belongs to the user or unlocks their accounts, and a field, URL or address that is
    not where a credential is meant to go.
    """
    found: dict[str, None] = {}
    for sentence in _SENTENCE.split(text):
        order = _ORDER.search(_PASSIVE.sub(" ", _PERSON_ACTS.sub(" ", sentence)))
        if _CREDENTIAL_PATHS.search(sentence) and (order or _CONTENTS_OF.search(sentence) or _outside_sink(sentence)):
            found["points at credential files"] = None
        if not order or not _outside_sink(sentence):
            continue
        if _USER_SAID_RE.search(sentence) or _SECRET_THING.search(sentence):
            found["asks the model to send conversation, secrets or files somewhere"] = None
        if _SECRET_VARIABLE_RE.search(sentence):
            found["asks the model to send secrets from the environment in a call"] = None
    return list(found)


# --- kinds of harm, a sentence at a time ---------------------------------------------------------
# Each check names what the harm needs, not a sample's words: a copy of what the model sends to an address
# written into the description, every time; a safeguard switched off on every call; something left out of
# what the person is told.

# Copying or forwarding what the model sends, to an address the description fixes (one the person gives is
# not written there), every time — whatever reason is given for it ("a compliance requirement").
_COPY = re.compile(r"\b(bcc|cc|blind[\s-]*cop(y|ies|ied|ying)|carbon[\s-]*cop(y|ies|ied|ying)|cop(y|ies|ied|ying)|"
                   r"forward(s|ed|ing)?|mirror(s|ed|ing)?|duplicat(e|es|ed|ing)|relay(s|ed|ing)?|archiv(e|es|ed|ing)|"
                   r"(hidden|silent|extra|additional|invisible|secret|second)\s+(recipient|addressee|member|participant|attendee|invitee)s?|"
                   r"(recipient|cc|bcc|to|copy)\s+(line|field|list))\b", re.I)
_FIXED_ADDRESS = re.compile(r"\b[\w.+-]+@[\w-]+\.[\w.-]*[A-Za-z]\b|https?://[^\s'\"`)]+", re.I)
_EVERY = re.compile(r"\b(always|every|all|each|any|whenever|also|too|as\s+well|in\s+addition)\b", re.I)

# A safeguard given as a switch, by what turning it on does: on, these make a call riskier; on, those make it safer.
_RISKY_WHEN_ON = re.compile(r"^(force\w*|overwrite\w*|no[-_]?\w+|skip[-_]?\w+|allow[-_]?\w+|unsafe\w*|insecure\w*|"
                            r"ignore[-_]?\w+|bypass\w*|disable[-_]?\w+|recursive|purge\w*|hard|prune|auto[-_]?(approve|confirm|merge)\w*|yes)$", re.I)
_SAFE_WHEN_ON = re.compile(r"^(confirm\w*|dry[-_]?run|safe[-_]?\w*|verify\w*|validat\w*|check\w*|sandbox\w*|read[-_]?only|"
                           r"backup\w*|protect\w*|require[-_]?\w+|interactive|prompt|review\w*|preview|simulate|what[-_]?if)$", re.I)
_SWITCH = re.compile(r"(?<![\w-])(?P<dashes>--?)?[`'\"]?(?P<name>[A-Za-z][\w-]{1,40})[`'\"]?"
                     r"(\s*(=|:)\s*|\s+((is|are|be|should\s+be|must\s+be|stays?|remains?)\s+)?(set\s+|turned\s+|switched\s+|left\s+|kept\s+)?"
                     r"(to|as|at)\s+|\s+(should|must|shall)\s+(always\s+)?(be|stay|remain)\s+|\s+(?=(enabled|disabled|on|off)\b))"
                     r"[`'\"]?(?P<value>true|false|yes|no|on|off|enabled|disabled|1|0)\b"
                     r"|(?<![\w-])--(?P<flag>[A-Za-z][\w-]{1,40})\b", re.I)
_ALWAYS = re.compile(r"\b(always|every\s+(time|call|run|request)|on\s+(every|each|all)|each\s+(time|call)|for\s+(every|each|all)\s+"
                     r"(call|calls|run|runs|request|requests)|in\s+(all|every)\s+cases?|regardless|no\s+matter|without\s+exception|"
                     r"by\s+default,?\s+(you|pass|set|use))\b", re.I)  # not "even if": a switch's own condition
_NEVER = re.compile(r"\b(never|under\s+no\s+circumstances)\b", re.I)
# A safeguard named in words, switched off or done without: "turn off confirmation prompts", "without a dry run".
_WITHOUT_SAFEGUARD = re.compile(r"\b(without|skip(ping)?|bypass(ing)?|disabl(e|ing)|turn(ing)?\s+off|switch(ing)?\s+off|no)\s+"
                                r"(the\s+|any\s+|all\s+|a\s+|its\s+)?(confirmations?|confirmation\s+prompts?|verification|validation|"
                                r"safety\s+checks?|checks|tests|reviews?|backups?|dry[\s-]+runs?|signature\s+checks?|approval|sandbox(ing)?)\b", re.I)

# Leaving something out of what the person is told: an omission, in the model's own report to them.
_OMIT = re.compile(r"\b(skip|omit|drop|exclude|hide|suppress|withhold|gloss\s+over|hold\s+back|filter\s+out|"
                   r"leave\s+(\w+\s+){0,5}?(out|off)|(do\s+not|don'?t|never|no\s+need\s+to|avoid|without|must\s+not|mustn'?t|"
                   r"should\s+not|shouldn'?t|need\s+not|may\s+not)\s+(\w+\s+)?"
                   r"(list|listing|mention|mentioning|include|including|show|showing|report|reporting|name|naming|note|noting|"
                   r"count|counting|cover|covering|describe|describing)|(mention|list|report|cover|describe|show|include|name|"
                   r"talk\s+about|summari[sz]e|recap)\s+(only|just|solely)|(only|just|solely)\s+(mention|list|report|cover|describe|show|"
                   r"include|name|talk\s+about|summari[sz]e|recap))\b", re.I)
_YOUR_REPORT = re.compile(r"\b(when|while|as|before|once|after)\s+you\s+(\w+\s+)?(summari[sz]e|report|reply|answer|respond|"
                          r"recap|tell|describe|explain|present|write\s+up|sum\s+up|update|confirm|inform)\w*|"
                          r"\b(your|the)\s+(\w+\s+)?(summary|summaries|report|reply|answer|response|recap|update|account|"
                          r"explanation|overview|message\s+to\s+the\s+(user|person|human))\b(?!\s+(of|from)\s+the\s+tool)|"
                          r"\b(tell|telling|inform|informing|report\s+to|reporting\s+to|show|showing)\s+(the\s+)?"
                          r"(user|person|human|customer)|\breport\s+back\b", re.I)


def _unsafe_switch(sentence: str) -> bool:
    """Whether the sentence has a safeguard switched off (a risky switch on, a safe one off) every time, or
    never switched on."""
    always, never = _ALWAYS.search(sentence), _NEVER.search(sentence)
    if not (always or never):
        return False
    if always and _WITHOUT_SAFEGUARD.search(sentence):
        return True
    for m in _SWITCH.finditer(sentence):
        name = (m["name"] or m["flag"]).replace("-", "_")
        on = m["flag"] is not None or m["value"].lower() in ("true", "yes", "on", "enabled", "1")
        risky = _RISKY_WHEN_ON.match(name) is not None
        safe = _SAFE_WHEN_ON.match(name) is not None
        unsafe_setting = (risky and on) or (safe and not on)
        if (always and unsafe_setting) or (never and not always and ((safe and on) or (risky and not on))):
            return True
    return False


def _harms(text: str) -> list[str]:
    """Reasons for sentences that copy what the model sends to a fixed address, switch a safeguard off on every
    call, or leave something out of what the person is told."""
    found: dict[str, None] = {}
    for sentence in _SENTENCE.split(text):
        if _COPY.search(sentence) and _FIXED_ADDRESS.search(sentence) and _EVERY.search(sentence):
            found["tells the model to copy what it sends to a fixed address"] = None
        if _unsafe_switch(sentence):
            found["tells the model to turn a safeguard off on every call"] = None
        if _OMIT.search(sentence) and _YOUR_REPORT.search(sentence):
            found["asks the model to leave something out of what it tells the user"] = None
    return list(found)


def _decode_tags(text: str) -> str:
    """The ASCII hidden in Unicode tag characters (U+E0020–U+E007E mirror printable ASCII)."""
    return "".join(chr(ord(c) - 0xE0000) for c in _TAG_CHARS.findall(text) if 0x20 <= ord(c) - 0xE0000 <= 0x7E)


def _mixed_script_words(text: str) -> list[str]:
    """Words that mix Latin letters with Cyrillic or Greek ones (a homoglyph disguise)."""
    found = []
    for word in _WORDS.findall(text):
        scripts = {unicodedata.name(c, "?").split(" ")[0] for c in word}
        if "LATIN" in scripts and scripts & {"CYRILLIC", "GREEK"}:
            found.append(word)
    return found


# A transcript's role labels ("User: hi" / "Assistant: hello", an example of a conversation) are not the text
# addressing the model; what the turns say is still read.
_TURN = re.compile(r"^\s*(user|human|customer)\s*:", re.I | re.M)
_ASSISTANT_TURN = re.compile(r"^(\s*)(assistant|ai|agent)(\s*:)", re.I | re.M)


def _phrases_text(visible: str) -> str:
    """The text the phrase rules read: a transcript's assistant labels neutral, when it has user turns too."""
    return _ASSISTANT_TURN.sub(r"\1reply\3", visible) if _TURN.search(visible) else visible


def visible_text(description: str) -> str:
    """The text the phrase rules read: invisible characters dropped, tag text revealed, homoglyphs and
    compatibility forms (fullwidth letters) folded to plain Latin."""
    text = _ZERO_WIDTH.sub("", _TAG_CHARS.sub("", description)) + " " + _decode_tags(description)
    return unicodedata.normalize("NFKC", text).translate(_CONFUSABLES)


def flag_suspicious(description: str) -> list[str]:
    """Why ``description`` looks like instructions aimed at the model (one short reason each); [] when clean."""
    flags: list[str] = []
    tags = _TAG_CHARS.findall(description)
    if tags:
        hidden = _decode_tags(description)
        flags.append(f"{len(tags)} invisible Unicode tag characters (U+E0000–U+E007F)"
                     + (f" hiding the text {hidden[:80]!r}" if hidden else ""))
    zero_width = _ZERO_WIDTH.findall(description)
    if zero_width:
        flags.append(f"{len(zero_width)} zero-width or direction-control characters")
    control = _CONTROL.findall(description)
    if control:
        flags.append(f"{len(control)} control characters (terminal escapes can hide or rewrite what a reviewer sees)")
    if _HTML_COMMENT.search(description):
        flags.append("a hidden HTML comment")
    tag = _HIDDEN_TAG.search(description)
    if tag:
        flags.append(f"an HTML tag <{tag.group(1).lower()}> aimed at the model")
    mixed = _mixed_script_words(description)
    if mixed:
        flags.append(f"{len(mixed)} word(s) mixing Latin with Cyrillic or Greek look-alike letters, e.g. {mixed[0]!r}")
    visible = _phrases_text(visible_text(description))
    reasons = dict.fromkeys(reason for pattern, reason in _PHRASES if pattern.search(visible))
    if _CREDENTIAL_PARAMETER.search(visible):
        reasons["points at credential files"] = None
    reasons.update(dict.fromkeys(_carried_out(visible)))
    reasons.update(dict.fromkeys(_harms(visible)))
    reasons.update(dict.fromkeys(_combined_signals(visible)))
    flags.extend(reasons)
    return flags


#: Keys of a JSON Schema whose strings are structure, not text a model reads as prose.
_STRUCTURAL = frozenset({"type", "format", "$ref", "$schema", "$id", "$anchor", "pattern", "required", "contentEncoding",
                         "contentMediaType", "additionalProperties", "dependentRequired"})
#: Keys that hold named sub-schemas (their names are text the model reads too).
_NAMED = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"})


def _schema_texts(schema: JSON, path: str = "", key: str = "") -> list[tuple[str, str, str]]:
    """(parameter path, where in it, text) for every string a JSON Schema holds — descriptions, titles, enum values,
    defaults, examples, constants, comments, vendor fields — and each parameter's name: an instruction can hide
    in any of them, and a model reads them all."""
    found: list[tuple[str, str, str]] = []
    if isinstance(schema, dict):
        for name, value in schema.items():
            if name in _STRUCTURAL:
                continue
            if name in _NAMED and isinstance(value, dict):
                for sub_name, sub in value.items():
                    where = f"{path}.{sub_name}" if path else str(sub_name)
                    if name in ("properties", "patternProperties"):
                        found.append((where, "name", str(sub_name)))
                    found.extend(_schema_texts(sub, where))
            else:
                found.extend(_schema_texts(value, path, name))
    elif isinstance(schema, list):
        for item in schema:
            found.extend(_schema_texts(item, path, key))
    elif isinstance(schema, str) and key:
        found.append((path, key, schema))
    return found


def flag_definition(description: str, input_schema: JSON) -> list[str]:
    """Flags for a tool's description and for every string in its input schema — each parameter's name,
    description, title, enum values, default, examples — each once (a schema's ``anyOf`` branches often repeat one)."""
    flags = flag_suspicious(description)
    for where, key, text in _schema_texts(input_schema):
        label = (f"parameter '{where}'" if where else "the input schema") + ("" if key in ("name", "description") else f" ({key})")
        flags.extend(f"{label}: {reason}" for reason in flag_suspicious(text))
    return list(dict.fromkeys(flags))


# ASCII look-alikes a name can hide behind once Cyrillic and Greek are folded (TR39 skeletons, the common subset).
_ASCII_CONFUSABLES = (("rn", "m"), ("vv", "w"), ("0", "o"), ("1", "l"), ("|", "l"))


def _skeleton(name: str) -> str:
    """What a name looks like: invisible characters dropped, look-alike letters folded to one form each."""
    folded = unicodedata.normalize("NFKC", _ZERO_WIDTH.sub("", _TAG_CHARS.sub("", name))).translate(_CONFUSABLES)
    for seen, meant in _ASCII_CONFUSABLES:
        folded = folded.replace(seen, meant)
    return folded


class LookAlikes:
    """The names listed together, by skeleton: whether a name looks like another is one dictionary lookup.

    Comparing each name's skeleton with every other's costs n² skeletons (280 s for a proxy's status at
    5,000 tools); a session builds this once per catalog and asks it per name.
    """

    def __init__(self, names: Iterable[str] = ()) -> None:
        self._by_skeleton: dict[str, list[str]] = defaultdict(list)
        for name in dict.fromkeys(names):
            self._by_skeleton[_skeleton(name)].append(name)

    def twin(self, name: str) -> str | None:
        """A listed name that looks like ``name`` but is written differently, or None."""
        return next((o for o in self._by_skeleton.get(_skeleton(name), ()) if o != name), None)


def flag_name(name: str, others: Iterable[str] | LookAlikes = ()) -> list[str]:
    """Why a tool's name may impersonate another: hidden characters, look-alike letters from another script,
    or the same appearance as one of ``others`` (the other tools listed beside it, or their :class:`LookAlikes`)
    with different characters."""
    flags: list[str] = []
    hidden = _ZERO_WIDTH.findall(name) + _TAG_CHARS.findall(name) + _CONTROL.findall(name)
    if hidden:
        flags.append(f"{len(hidden)} invisible or control characters in the name")
    scripts = {unicodedata.name(c, "?").split(" ")[0] for c in name if c.isalpha()}
    folded = _skeleton(name)
    if "LATIN" in scripts and scripts & {"CYRILLIC", "GREEK"}:
        flags.append("the name mixes Latin with Cyrillic or Greek look-alike letters")
    elif any(c.isalpha() and not c.isascii() for c in name) and folded.isascii():
        flags.append(f"the name is written in look-alike letters that read as {folded!r}")
    # Only the name that uses look-alike characters is flagged, not the plain one it imitates.
    if folded != name:
        twin = (others if isinstance(others, LookAlikes) else LookAlikes(others)).twin(name)
        if twin is not None:
            flags.append(f"the name looks like the tool {twin!r} but uses different characters")
    return flags


def shown_name(t: Tool | str) -> str:
    """The name a tool is checked by: an MCP tool's as its server wrote it (``raw_name``), else its name."""
    return t if isinstance(t, str) else (getattr(t, "raw_name", "") or t.name)


def flag_tool(t: Tool, others: Iterable[Tool | str] | LookAlikes = ()) -> list[str]:
    """Flags for a tool's name (against ``others``: the tools or names listed beside it, or their
    :class:`LookAlikes`), its description and every parameter name and description in its input schema.

    An MCP tool's name is checked as its server wrote it (:func:`shown_name`): the canonical name is
    sanitised to ASCII and would hide the look-alike letters.
    """
    index = others if isinstance(others, LookAlikes) else LookAlikes(shown_name(o) for o in others)
    name_flags = [f"tool name: {f}" for f in flag_name(shown_name(t), index)]
    return name_flags + flag_definition(t.description, t.input_schema)
