"""The small story every prompt family's example request is built on
(:mod:`cogrsi_lib.llm.families`): a false-belief question, a nested one and a numeric one."""

from __future__ import annotations

from cogrsi_lib.reader.items import ReaderItem

STORY = ("1 Sally entered the kitchen.\n2 Anne entered the kitchen.\n"
         "3 The ball is in the basket.\n4 Sally exited the kitchen.\n"
         "5 Anne moved the ball to the box.\n6 Sally entered the kitchen.")
ITEM = ReaderItem("example", STORY, "Where will Sally look for the ball?",
                  options=("basket", "box"), gold="A", story_id="example",
                  meta={"chain": ["Sally"], "object": "ball"})
NESTED = ReaderItem("nested", STORY, "Where does Anne think that Sally thinks the ball is?",
                    options=("basket", "box"), gold="basket", story_id="example",
                    meta={"chain": ["Anne", "Sally"], "object": "ball"})
NUMERIC = ReaderItem("number", "Each player picks a number from 0 to 100.",
                     "Which number should you pick to be two thirds of the average?")
