; PDDL-Mind predefined domain (PDDL-Mind §3 "Predefined domain file", §5.1).
;
; The paper's four types (agent, loc, obj, utterance), its physical predicates (at, in,
; holding), its access predicates (seen, heard) and its seven actions (move, open, close, grab,
; drop, ask, tell).  Containers are objects marked (container ?c) and placed in a location with
; (at ?c ?l), so that "open a cabinet" checks that the cabinet is a container in the room.
;
; Extension, so that the access oracle's events (cogrsi_lib/oracle/SEMANTICS.md) are actions of
; this domain and its state can be checked against the oracle's at every step:
;   types      prop, value             an object's properties and their values (colour: red)
;   predicates asleep                  an asleep agent perceives nothing and cannot act
;              has, noticed, visible   property values; what each agent last perceived of them
;              says, private           what an utterance claims; a whisper is heard by two only
;   actions    sleep, wake, peek, change
; Oracle event -> actions (the room is one loc, `outside` another):
;   leave a   -> (move a room outside)        enter a  -> (move a outside room)
;   sleep a   -> (sleep a room)               wake a   -> (wake a room)
;   move a c  -> (open a cur room) (grab a o cur room) (close a cur room)
;                (open a c room) (drop a o c room) (close a c room)
;                (a container open before the move is neither opened nor closed)
;   whisper s l c -> (tell s l u room) with (says u o c) (private u) in the problem
;   peek a    -> (peek a cur room)            change a p v -> (change a o p old v room)
;
; Access semantics (the oracle's, where it has a rule):
;   * (seen ?x ?o ?c) is x's latest sight of o: it was in c.  A new sight replaces the old one
;     (the delete of a conditional effect is applied before the add).  Who sees: every awake
;     agent in the room for drop and open, the peeker alone for peek, and an agent who
;     arrives (move) or wakes next to an open container.  A grab is seen by every awake agent
;     in the room: their sight of the object in a container is deleted (it is in a hand now).
;   * grab and drop need the container open (opened ?c): the object must be in view.
;   * (noticed ?x ?o ?p ?v): the value of property p of o that x last perceived.  A change is
;     perceived by every awake agent in the room, visible property or not.  Seeing an object
;     (drop, peek, open, arriving or waking next to an open container) shows its visible
;     properties too (semantics v2: seeing the object shows its location and visible
;     properties).
;   * (heard ?x ?u): x heard u.  tell and ask are heard by speaker and addressee, and by every
;     awake agent in the room unless the utterance is private (a whisper).
; Conditional effects are evaluated in the state before the action; their deletes are applied
; before their adds.  Holding an object does not change anyone's sight of it.

(define (domain pddl-mind)
  (:requirements :typing :negative-preconditions :equality :disjunctive-preconditions
                 :existential-preconditions :conditional-effects)
  (:types agent loc obj utterance prop value)

  (:predicates
    (at ?x - (either agent obj) ?l - loc)       ; an agent, or a container, is in a location
    (in ?o - obj ?c - obj)                      ; object o is inside container c
    (container ?c - obj)
    (opened ?c - obj)                           ; its contents are in view from the room
    (holding ?a - agent ?o - obj)
    (asleep ?a - agent)
    (seen ?a - agent ?o - obj ?c - obj)         ; a's latest sight of o: inside c
    (heard ?a - agent ?u - utterance)
    (says ?u - utterance ?o - obj ?c - obj)     ; u claims that o is inside c
    (private ?u - utterance)                    ; u is whispered: only speaker and addressee hear
    (has ?o - obj ?p - prop ?v - value)         ; property p of o has value v
    (noticed ?a - agent ?o - obj ?p - prop ?v - value)
    (visible ?p - prop))                        ; p can be seen by looking

  ; An agent walks from one location to another; arriving next to an open container shows
  ; where what lies in it is, and its visible properties.
  (:action move
    :parameters (?a - agent ?from - loc ?to - loc)
    :precondition (and (at ?a ?from) (not (asleep ?a)) (not (= ?from ?to)))
    :effect (and (not (at ?a ?from)) (at ?a ?to)
      (forall (?o - obj ?c - obj ?d - obj)
        (when (and (in ?o ?c) (at ?c ?to) (opened ?c) (seen ?a ?o ?d)) (not (seen ?a ?o ?d))))
      (forall (?o - obj ?c - obj)
        (when (and (in ?o ?c) (at ?c ?to) (opened ?c)) (seen ?a ?o ?c)))
      (forall (?o - obj ?c - obj ?p - prop ?v - value ?w - value)
        (when (and (in ?o ?c) (at ?c ?to) (opened ?c) (visible ?p) (has ?o ?p ?v)
                   (noticed ?a ?o ?p ?w))
              (not (noticed ?a ?o ?p ?w))))
      (forall (?o - obj ?c - obj ?p - prop ?v - value)
        (when (and (in ?o ?c) (at ?c ?to) (opened ?c) (visible ?p) (has ?o ?p ?v))
              (noticed ?a ?o ?p ?v)))))

  ; Opening a container shows its contents (where they are and their visible properties) to
  ; every awake agent in the room.
  (:action open
    :parameters (?a - agent ?c - obj ?l - loc)
    :precondition (and (at ?a ?l) (not (asleep ?a)) (container ?c) (at ?c ?l)
                       (not (opened ?c)))
    :effect (and (opened ?c)
      (forall (?x - agent ?o - obj ?d - obj)
        (when (and (in ?o ?c) (seen ?x ?o ?d) (at ?x ?l) (not (asleep ?x)))
              (not (seen ?x ?o ?d))))
      (forall (?x - agent ?o - obj)
        (when (and (in ?o ?c) (at ?x ?l) (not (asleep ?x)))
              (seen ?x ?o ?c)))
      (forall (?x - agent ?o - obj ?p - prop ?v - value ?w - value)
        (when (and (in ?o ?c) (visible ?p) (has ?o ?p ?v) (noticed ?x ?o ?p ?w) (at ?x ?l)
                   (not (asleep ?x)))
              (not (noticed ?x ?o ?p ?w))))
      (forall (?x - agent ?o - obj ?p - prop ?v - value)
        (when (and (in ?o ?c) (visible ?p) (has ?o ?p ?v) (at ?x ?l) (not (asleep ?x)))
              (noticed ?x ?o ?p ?v)))))

  (:action close
    :parameters (?a - agent ?c - obj ?l - loc)
    :precondition (and (at ?a ?l) (not (asleep ?a)) (container ?c) (at ?c ?l) (opened ?c))
    :effect (not (opened ?c)))

  ; Taking an object out of an open container in the same location; every awake agent in the
  ; room sees it taken, so their sight of it in a container no longer holds.
  (:action grab
    :parameters (?a - agent ?o - obj ?c - obj ?l - loc)
    :precondition (and (at ?a ?l) (not (asleep ?a)) (at ?c ?l) (in ?o ?c) (opened ?c)
                       (not (= ?o ?c)))
    :effect (and (not (in ?o ?c)) (holding ?a ?o)
      (forall (?x - agent ?d - obj)
        (when (and (seen ?x ?o ?d) (at ?x ?l) (not (asleep ?x)))
              (not (seen ?x ?o ?d))))))

  ; Putting a held object into an open container; every awake agent in the room sees where it
  ; went and the object's visible properties.
  (:action drop
    :parameters (?a - agent ?o - obj ?c - obj ?l - loc)
    :precondition (and (at ?a ?l) (not (asleep ?a)) (holding ?a ?o) (container ?c)
                       (at ?c ?l) (opened ?c) (not (= ?o ?c)))
    :effect (and (not (holding ?a ?o)) (in ?o ?c)
      (forall (?x - agent ?d - obj)
        (when (and (seen ?x ?o ?d) (at ?x ?l) (not (asleep ?x)))
              (not (seen ?x ?o ?d))))
      (forall (?x - agent)
        (when (and (at ?x ?l) (not (asleep ?x)))
              (seen ?x ?o ?c)))
      (forall (?x - agent ?p - prop ?v - value ?w - value)
        (when (and (visible ?p) (has ?o ?p ?v) (noticed ?x ?o ?p ?w) (at ?x ?l)
                   (not (asleep ?x)))
              (not (noticed ?x ?o ?p ?w))))
      (forall (?x - agent ?p - prop ?v - value)
        (when (and (visible ?p) (has ?o ?p ?v) (at ?x ?l) (not (asleep ?x)))
              (noticed ?x ?o ?p ?v)))))

  ; Speaker s asks addressee h (utterance u).  Heard as tell is.
  (:action ask
    :parameters (?s - agent ?h - agent ?u - utterance ?l - loc)
    :precondition (and (at ?s ?l) (not (asleep ?s)) (at ?h ?l) (not (asleep ?h))
                       (not (= ?s ?h)))
    :effect (and (heard ?s ?u) (heard ?h ?u)
      (forall (?x - agent)
        (when (and (at ?x ?l) (not (asleep ?x)) (not (private ?u)))
              (heard ?x ?u)))))

  ; Speaker s tells addressee h utterance u: both hear it, and so does every awake agent in
  ; the room unless u is private (a whisper).
  (:action tell
    :parameters (?s - agent ?h - agent ?u - utterance ?l - loc)
    :precondition (and (at ?s ?l) (not (asleep ?s)) (at ?h ?l) (not (asleep ?h))
                       (not (= ?s ?h)))
    :effect (and (heard ?s ?u) (heard ?h ?u)
      (forall (?x - agent)
        (when (and (at ?x ?l) (not (asleep ?x)) (not (private ?u)))
              (heard ?x ?u)))))

  ; --- extension for the access oracle ---

  (:action sleep
    :parameters (?a - agent ?l - loc)
    :precondition (and (at ?a ?l) (not (asleep ?a)))
    :effect (asleep ?a))

  ; Waking next to an open container shows where what lies in it is, and its visible
  ; properties.
  (:action wake
    :parameters (?a - agent ?l - loc)
    :precondition (and (at ?a ?l) (asleep ?a))
    :effect (and (not (asleep ?a))
      (forall (?o - obj ?c - obj ?d - obj)
        (when (and (in ?o ?c) (at ?c ?l) (opened ?c) (seen ?a ?o ?d)) (not (seen ?a ?o ?d))))
      (forall (?o - obj ?c - obj)
        (when (and (in ?o ?c) (at ?c ?l) (opened ?c)) (seen ?a ?o ?c)))
      (forall (?o - obj ?c - obj ?p - prop ?v - value ?w - value)
        (when (and (in ?o ?c) (at ?c ?l) (opened ?c) (visible ?p) (has ?o ?p ?v)
                   (noticed ?a ?o ?p ?w))
              (not (noticed ?a ?o ?p ?w))))
      (forall (?o - obj ?c - obj ?p - prop ?v - value)
        (when (and (in ?o ?c) (at ?c ?l) (opened ?c) (visible ?p) (has ?o ?p ?v))
              (noticed ?a ?o ?p ?v)))))

  ; Looking into a container alone: only the peeker sees where its contents are, and their
  ; visible properties.
  (:action peek
    :parameters (?a - agent ?c - obj ?l - loc)
    :precondition (and (at ?a ?l) (not (asleep ?a)) (container ?c) (at ?c ?l))
    :effect (and
      (forall (?o - obj ?d - obj)
        (when (and (in ?o ?c) (seen ?a ?o ?d)) (not (seen ?a ?o ?d))))
      (forall (?o - obj)
        (when (in ?o ?c) (seen ?a ?o ?c)))
      (forall (?o - obj ?p - prop ?v - value ?w - value)
        (when (and (in ?o ?c) (visible ?p) (has ?o ?p ?v) (noticed ?a ?o ?p ?w))
              (not (noticed ?a ?o ?p ?w))))
      (forall (?o - obj ?p - prop ?v - value)
        (when (and (in ?o ?c) (visible ?p) (has ?o ?p ?v))
              (noticed ?a ?o ?p ?v)))))

  ; Changing a property of an object in reach (held, or in a container in the room); every
  ; awake agent in the room perceives the new value.
  (:action change
    :parameters (?a - agent ?o - obj ?p - prop ?old - value ?new - value ?l - loc)
    :precondition (and (at ?a ?l) (not (asleep ?a)) (has ?o ?p ?old) (not (= ?old ?new))
                       (or (holding ?a ?o)
                           (exists (?c - obj) (and (in ?o ?c) (at ?c ?l)))))
    :effect (and (not (has ?o ?p ?old)) (has ?o ?p ?new)
      (forall (?x - agent ?w - value)
        (when (and (noticed ?x ?o ?p ?w) (at ?x ?l) (not (asleep ?x)))
              (not (noticed ?x ?o ?p ?w))))
      (forall (?x - agent)
        (when (and (at ?x ?l) (not (asleep ?x)))
              (noticed ?x ?o ?p ?new)))))
)
