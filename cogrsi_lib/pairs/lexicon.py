"""Disjoint lexicons of the gate, evaluation and training splits (CogRSI §3, App. C
"Counterfactual pairs").

Each split draws its stories from its own names, places (rooms for narratives, chat names
for conversations), objects, containers and sentence templates; no two splits share any of
them, so no surface cue of the gate split reaches the evaluation split. The ``train`` split
is what the embedded model is fine-tuned on (``cogrsi_lib.train``): it shares nothing with
the gate and eval splits, nor with the oracle's default sampler and templates (the nested
benchmark, the audit sample and the golden worlds), nor with the words of the ToMi and
Hi-ToM samples. It is also much wider (87 names, 62 containers) and tells its narratives in
three phrasings, so that a model trained on it has to copy places from the story and read
events in more than one wording, rather than lean on a few memorised words.
Every lexicon entry is a single word, so a word-level check can prove the disjointness
on rendered text.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, replace

from cogrsi_lib.oracle.render import CHAT, NARRATIVE, Templates

SPLITS = ("gate", "eval")


@dataclass(frozen=True)
class Lexicon:
    """Everything a split may put into a story: words and the templates that carry them."""

    split: str
    names: tuple[str, ...]
    rooms: tuple[str, ...]
    chats: tuple[str, ...]
    objects: tuple[str, ...]
    containers: tuple[str, ...]
    narrative: Templates
    chat: Templates
    #: other phrasings of ``narrative`` a story may be told in (only the train split has them)
    variants: tuple[Templates, ...] = ()

    @property
    def places(self) -> tuple[str, ...]:
        """Rooms of the narratives and names of the group chats."""
        return self.rooms + self.chats

    def words(self) -> frozenset[str]:
        """Every lexicon entry, lower-cased (names, places, objects, containers)."""
        return frozenset(
            w.lower() for w in self.names + self.places + self.objects + self.containers
        )

    def template_strings(self) -> frozenset[str]:
        """Every template string of both styles (the ``style`` labels excluded)."""
        return frozenset(_strings(self.narrative) | _strings(self.chat)
                         | set().union(*(_strings(t) for t in self.variants)))


def _strings(t: Templates) -> set[str]:
    out: set[str] = set()
    for f in dataclasses.fields(t):
        value = getattr(t, f.name)
        if f.name == "style":
            continue
        if isinstance(value, str):
            out.add(value)
        elif isinstance(value, dict):
            out |= set(value.values())
    return out


# -- gate split: the oracle's ToMi-style narrative and its group chat ----------------------
GATE_NARRATIVE: Templates = NARRATIVE
GATE_CHAT: Templates = replace(
    CHAT,
    present="[{agent} is in the {room} group chat]",
    sleep="[{agent} muted the chat and stopped reading it]",
)

GATE = Lexicon(
    split="gate",
    names=("Amelia", "Benjamin", "Charlotte", "Daniel", "Evelyn", "Gabriel", "Hannah", "Isaac",
           "Julia", "Lucas", "Mia", "Nathan", "Olivia", "Owen", "Sophia", "Thomas"),
    rooms=("pantry", "cellar", "attic", "lounge", "workshop", "nursery", "porch", "laundry"),
    chats=("hiking", "roommates", "volunteers", "choir", "neighbours", "robotics", "chess",
           "gardening"),
    objects=("scarf", "apple", "hammer", "wallet", "notebook", "candle", "spoon", "torch",
             "medal", "stapler"),
    containers=("crate", "envelope", "suitcase", "bucket", "cabinet", "jar", "pouch", "hamper",
                "locker", "bin"),
    narrative=GATE_NARRATIVE,
    chat=GATE_CHAT,
)

# -- evaluation split: new words and new wording throughout --------------------------------
EVAL_NARRATIVE = Templates(
    style="narrative",
    present="{agent} is standing in the {room}.",
    asleep="{agent} is sleeping.",
    located="The {object} sits in the {container}.",
    open="The {container} has no lid, so its contents can be seen from anywhere in the {room}.",
    has_property="The {object} looks {value}.",
    leave="{agent} walked out of the {room}.",
    enter="{agent} came back into the {room}.",
    sleep="{agent} dozed off.",
    wake="{agent} awoke.",
    move="{agent} put the {object} in the {location}.",
    whisper="{agent} whispered to {listener} that the {object} was in the {location}.",
    peek="{agent} checked inside the {container}.",
    change={"color": "{agent} coloured the {object} {value}."},
    change_default="{agent} turned the {object} {value}.",
    ask_reality="Where is the {object} actually?",
    ask_location="In which container does {chain_text} the {object} is?",
    ask_property_reality="Which {property} does the {object} actually have?",
    ask_property="Which {property} does {chain_text} the {object} has?",
    think="believe",
    thinks_link="that {agent} believes",
    numbered=True,
    watched="Unseen, {agent} was watching from just outside the {room}.",
    missed="{agent} happened to glance away and saw none of it, unnoticed by the others.",
    known_liar="All of them are aware that {agent} tells falsehoods.",
    lie_revealed="(That was untrue, and {agent} knew it.)",
)

EVAL_CHAT = Templates(
    style="chat",
    present="[{agent} joined the {room} channel]",
    asleep="[{agent} has notifications off]",
    located="{agent}: FYI the {object} is in the {container}.",
    open="{agent}: The {container} is uncovered, everyone here can see inside it.",
    has_property="{agent}: FYI the {object} is {value}.",
    leave="[{agent} went offline]",
    enter="[{agent} came back online]",
    sleep="[{agent} switched off notifications and stopped reading]",
    wake="[{agent} switched notifications back on]",
    move="{agent}: Heads up, I put the {object} in the {location}.",
    whisper="(direct message) {agent} to {listener}: the {object} is in the {location}.",
    peek="({agent} quietly checked the {container})",
    change={"color": "{agent}: I coloured the {object} {value}."},
    change_default="{agent}: I turned the {object} {value}.",
    ask_reality="Where is the {object} actually?",
    ask_location="In which container does {chain_text} the {object} is?",
    ask_property_reality="Which {property} does the {object} actually have?",
    ask_property="Which {property} does {chain_text} the {object} has?",
    think="believe",
    thinks_link="that {agent} believes",
    numbered=False,
    watched="({agent} was quietly lurking and saw this; nobody was aware)",
    missed="({agent} scrolled past without seeing it; the others assumed otherwise)",
    known_liar="[the channel knows {agent} makes things up]",
    lie_revealed="(that message from {agent} was knowingly false)",
)

EVAL = Lexicon(
    split="eval",
    names=("Aiden", "Bianca", "Caleb", "Delia", "Elliot", "Fiona", "Hugo", "Ingrid", "Jasper",
           "Keira", "Leon", "Marta", "Nolan", "Priya", "Ruben", "Tessa"),
    rooms=("library", "bathroom", "bedroom", "office", "basement", "studio", "playroom",
           "veranda"),
    chats=("cycling", "flatmates", "band", "bakery", "orchestra", "climbing", "pottery",
           "trivia"),
    objects=("banana", "glove", "compass", "ticket", "whistle", "bracelet", "sponge", "puzzle",
             "camera", "thimble"),
    containers=("chest", "satchel", "tin", "closet", "backpack", "carton", "wardrobe", "trunk",
                "bowl", "briefcase"),
    narrative=EVAL_NARRATIVE,
    chat=EVAL_CHAT,
)

# -- training split: the fine-tuning data's own words and wording ----------------------------
TRAIN_NARRATIVE = Templates(
    style="narrative",
    present="{agent} is waiting in the {room}.",
    asleep="{agent} is napping.",
    located="The {object} rests inside the {container}.",
    open="The {container} stands uncovered, so whoever is in the {room} sees what it holds.",
    has_property="The {object} appears {value}.",
    leave="{agent} left the {room}.",
    enter="{agent} went into the {room}.",
    sleep="{agent} nodded off.",
    wake="{agent} stirred awake.",
    move="{agent} transferred the {object} into the {location}.",
    whisper="{agent} quietly informed {listener} that the {object} lay in the {location}.",
    peek="{agent} opened the {container} for a look.",
    change={"color": "{agent} dyed the {object} {value}."},
    change_default="{agent} rendered the {object} {value}.",
    ask_reality="Where is the {object} at the end?",
    ask_location="Where does {chain_text} to find the {object}?",
    ask_property_reality="Which {property} is the {object} at the end?",
    ask_property="Which {property} does {chain_text} the {object} to be?",
    think="expect",
    thinks_link="that {agent} expects",
    numbered=True,
    watched="{agent} observed this unseen, through a gap in the door.",
    missed="{agent} was distracted and did not notice this, though the rest assumed so.",
    known_liar="Each of them knows {agent} is a habitual fibber.",
    lie_revealed="({agent} said this knowing it was false.)",
)

TRAIN_CHAT = Templates(
    style="chat",
    present="[{agent} entered the {room} thread]",
    asleep="[{agent} is away from keyboard]",
    located="{agent}: Note, the {object} rests inside the {container}.",
    open="{agent}: The {container} stands uncovered, all of us can see into it.",
    has_property="{agent}: Note, the {object} appears {value}.",
    leave="[{agent} logged off]",
    enter="[{agent} logged back on]",
    sleep="[{agent} paused the thread]",
    wake="[{agent} resumed the thread]",
    move="{agent}: Update, the {object} has been transferred into the {location}.",
    whisper="(side message) {agent} tells {listener}: the {object} lay in the {location}.",
    peek="({agent} opened the {container} for a look, saying nothing)",
    change={"color": "{agent}: Update, I dyed the {object} {value}."},
    change_default="{agent}: Update, I rendered the {object} {value}.",
    ask_reality="Where is the {object} at the end?",
    ask_location="Where does {chain_text} to find the {object}?",
    ask_property_reality="Which {property} is the {object} at the end?",
    ask_property="Which {property} does {chain_text} the {object} to be?",
    think="expect",
    thinks_link="that {agent} expects",
    numbered=False,
    watched="({agent} read this over a shoulder; nobody realised)",
    missed="({agent} skipped this message, though the others supposed otherwise)",
    known_liar="[the thread knows {agent} is a habitual fibber]",
    lie_revealed="({agent} said this knowing it was false)",
)

#: two more phrasings of the train narrative, so that a trained model meets each event and
#: question in several wordings rather than learning one template's surface
TRAIN_NARRATIVE_VARIANTS = (
    Templates(
        style="narrative",
        present="{agent} is lingering in the {room}.",
        asleep="{agent} is dozing.",
        located="The {object} sits within the {container}.",
        open="The {container} has no lid, so anyone in the {room} can see its contents.",
        has_property="The {object} looks to be {value}.",
        leave="{agent} wandered out of the {room}.",
        enter="{agent} stepped into the {room}.",
        sleep="{agent} drifted off to sleep.",
        wake="{agent} woke with a start.",
        move="{agent} shifted the {object} over to the {location}.",
        whisper="{agent} murmured to {listener} that the {object} sat in the {location}.",
        peek="{agent} lifted the lid of the {container} to check.",
        change={"color": "{agent} coated the {object} in {value}."},
        change_default="{agent} made over the {object} as {value}.",
        ask_reality="Where does the {object} sit in the end?",
        ask_location="Where does {chain_text} the {object} sits now?",
        ask_property_reality="Which {property} does the {object} have in the end?",
        ask_property="Which {property} does {chain_text} the {object} bears?",
        think="reckon",
        thinks_link="that {agent} reckons",
        numbered=True,
        watched="{agent} spied on this from the doorway; no one realised.",
        missed="{agent} was daydreaming and missed this, though the others assumed not.",
        known_liar="All of them know that {agent} tells tall tales.",
        lie_revealed="({agent} knew this was untrue.)",
    ),
    Templates(
        style="narrative",
        present="{agent} is sitting in the {room}.",
        asleep="{agent} is fast asleep.",
        located="At first the {object} is kept in the {container}.",
        open="The {container} is wide open; everyone in the {room} can look inside.",
        has_property="The {object} seems {value}.",
        leave="{agent} headed out of the {room}.",
        enter="{agent} walked into the {room}.",
        sleep="{agent} fell into a doze.",
        wake="{agent} roused from the doze.",
        move="{agent} relocated the {object} to the {location}.",
        whisper="{agent} confided to {listener} that the {object} was kept in the {location}.",
        peek="{agent} glanced inside the {container}.",
        change={"color": "{agent} tinted the {object} {value}."},
        change_default="{agent} altered the {object} to be {value}.",
        ask_reality="In which place is the {object} at the finish?",
        ask_location="In which place does {chain_text} the {object} is?",
        ask_property_reality="What {property} is the {object} at the finish?",
        ask_property="What {property} does {chain_text} the {object} is by now?",
        think="suppose",
        thinks_link="that {agent} supposes",
        numbered=True,
        watched="{agent} saw this through a window without anyone knowing.",
        missed="{agent} had looked elsewhere and missed this, unnoticed by the rest.",
        known_liar="Everybody is aware that {agent} often fibs.",
        lie_revealed="({agent} invented this.)",
    ),
)

TRAIN = Lexicon(
    split="train",
    names=("Ansel", "Beatrix", "Cosmo", "Dorian", "Esme", "Florian", "Greta", "Horatio", "Imogen",
           "Jonas", "Linnea", "Magnus", "Quentin", "Rosalind", "Sigrid", "Viggo", "Adelmo",
           "Agathe", "Alaric", "Amadeo", "Aurelio", "Balthazar", "Benedikt", "Bertil",
           "Calista", "Casimir", "Cordelia", "Cyprian", "Dagny", "Desmond", "Edvard", "Elodie",
           "Emrys", "Eulalie", "Evander", "Fenella", "Ferdinand", "Gideon", "Gisela", "Gunnar",
           "Hedda", "Ignatius", "Isolde", "Ivor", "Jolanda", "Jorunn", "Leander", "Leopold",
           "Lucasta", "Margarethe", "Marius", "Nikolai", "Octavia", "Odile", "Oswin", "Perpetua",
           "Philippa", "Rasmus", "Rupert", "Saoirse", "Severin", "Solveig", "Tancred", "Thaddeus",
           "Ulrika", "Valentin", "Wilhelmina", "Yvonne", "Zenobia", "Ottilie", "Percival",
           "Clementine", "Barnaby", "Cosima", "Gwendolyn", "Lysander", "Mathilde", "Orsolya",
           "Peregrine", "Rosamund", "Sebastiano", "Torvald", "Ximena", "Zebulon", "Aurora",
           "Bartholomew", "Cressida"),
    rooms=("conservatory", "greenhouse", "scullery", "boathouse", "observatory", "solarium",
           "vestibule", "chapel", "parlour", "larder", "gallery", "armoury", "belfry", "cloister",
           "crypt", "dovecote", "gatehouse", "granary", "orangery", "pavilion", "refectory",
           "rotunda", "sacristy", "smokehouse", "stable", "summerhouse", "taproom", "tackroom",
           "turret", "washhouse", "woodshed", "icehouse", "gazebo", "mezzanine", "foyer",
           "alcove", "antechamber", "apiary", "aviary"),
    chats=("sailing", "astronomy", "knitting", "beekeeping", "fencing", "rowing", "quilting",
           "birdwatching"),
    objects=("pinecone", "acorn", "harmonica", "teacup", "spyglass", "locket", "trowel",
             "monocle", "quill", "ladle", "abacus", "sextant", "metronome", "kazoo", "ocarina",
             "yoyo", "pocketwatch", "hourglass", "inkwell", "paperweight", "snowglobe",
             "figurine", "brooch", "cufflink", "tiara", "amulet", "talisman", "barometer",
             "magnifier", "pincushion", "corkscrew", "nutcracker", "whisk", "spatula", "pestle",
             "castanets", "tambourine", "marionette", "kaleidoscope", "protractor", "stopwatch",
             "lorgnette", "seashell", "conch", "geode", "fossil", "arrowhead", "doubloon",
             "horseshoe", "pendant", "harmonium", "gyroscope"),
    containers=("hatbox", "urn", "canister", "coffer", "hutch", "bureau", "tureen", "thermos",
                "caddy", "valise", "casket", "pannier", "creel", "reliquary", "humidor", "firkin",
                "keg", "demijohn", "flagon", "ewer", "pitcher", "amphora", "decanter", "carafe",
                "cruet", "terrine", "casserole", "cauldron", "kettle", "scuttle", "breadbin",
                "knapsack", "rucksack", "haversack", "portmanteau", "holdall", "carpetbag",
                "reticule", "pyxis", "armoire", "credenza", "sideboard", "dresser", "commode",
                "escritoire", "chiffonier", "tallboy", "ottoman", "footlocker", "strongbox",
                "lockbox", "cashbox", "tuckbox", "toolbox", "birdhouse", "kennel", "terrarium",
                "planter", "trough", "manger", "bassinet", "cradle"),
    narrative=TRAIN_NARRATIVE,
    chat=TRAIN_CHAT,
    variants=TRAIN_NARRATIVE_VARIANTS,
)

LEXICONS: dict[str, Lexicon] = {"gate": GATE, "eval": EVAL, "train": TRAIN}

_WORD = re.compile(r"[A-Za-z]+")


def words_in(text: str) -> frozenset[str]:
    """The lower-cased words of ``text`` (letters only), for disjointness checks."""
    return frozenset(w.lower() for w in _WORD.findall(text))


def lexicon(split: str) -> Lexicon:
    """The lexicon of ``split`` ("gate", "eval" or "train")."""
    if split not in LEXICONS:
        raise ValueError(f"unknown split {split!r}; expected one of {tuple(LEXICONS)}")
    return LEXICONS[split]
