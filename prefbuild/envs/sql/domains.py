"""Table domains for synthetic DBBench items: names, columns and value makers.

Real DBBench tables come from Wikipedia (WikiSQL, WikiTableQuestions...): free-text table
names with spaces, commas and parentheses, column names with ``/``, ``#``, ``%`` and ``.``,
and every value stored as text. The domains below imitate that, so an agent trained on
generated items meets the same quoting and type problems as on the benchmark.

Column roles drive question generation: ``key`` (unique, names a row), ``cat`` (few
distinct values, good for filters and counts), ``num`` (clean numbers, good for ranking and
aggregation), ``text`` (anything else, including numbers MySQL cannot read: ``4,567``, ``55%``).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

Maker = Callable[[random.Random], str]

FIRST = [
    "Amos",
    "Anna",
    "Bruno",
    "Carla",
    "Daniel",
    "Elena",
    "Farid",
    "Greta",
    "Hiro",
    "Ines",
    "Jonas",
    "Kaito",
    "Lena",
    "Marco",
    "Nadia",
    "Oskar",
    "Paula",
    "Quentin",
    "Rosa",
    "Sven",
    "Tamara",
    "Ugo",
    "Vera",
    "Walter",
    "Ximena",
    "Yusuf",
    "Zofia",
    "Aiko",
    "Bram",
    "Chloe",
    "Diego",
    "Emeka",
    "Freya",
    "Goran",
    "Hana",
    "Ivo",
    "Jana",
    "Kofi",
    "Lucia",
    "Mateo",
    "Nora",
    "Omar",
    "Pia",
    "Rafael",
    "Sofia",
    "Tomas",
    "Ulla",
    "Viktor",
    "Wen",
    "Yara",
    "Zane",
    "Leila",
    "Henrik",
    "Mirela",
    "Teodor",
    "Agnes",
]
LAST = [
    "Oz",
    "Luukkonen",
    "Mabuchi",
    "Kowalski",
    "Ferreira",
    "Nakamura",
    "Okafor",
    "Lindqvist",
    "Moreau",
    "Rossi",
    "Novak",
    "Haddad",
    "Petrov",
    "Silva",
    "Jensen",
    "Alvarez",
    "Schultz",
    "Brennan",
    "Kovac",
    "Yamada",
    "Dubois",
    "Costa",
    "Horvath",
    "Larsen",
    "Mendes",
    "Ivanova",
    "Laine",
    "Garcia",
    "Weber",
    "Sato",
    "Kim",
    "Olsen",
    "Duarte",
    "Marsh",
    "Whitfield",
    "Achebe",
    "Castellano",
    "Varga",
    "Halloran",
    "Ekstrom",
    "Bianchi",
    "Takeda",
    "Adeyemi",
    "Sorensen",
    "Quiroga",
]
COUNTRIES = [
    "Brazil",
    "Japan",
    "France",
    "Germany",
    "Italy",
    "Canada",
    "Norway",
    "Finland",
    "Kenya",
    "Mexico",
    "Poland",
    "Portugal",
    "Spain",
    "Sweden",
    "Egypt",
    "Chile",
    "Greece",
    "Ireland",
    "Israel",
    "Nigeria",
    "Peru",
    "Turkey",
    "Ukraine",
    "Vietnam",
    "Argentina",
    "Australia",
    "Austria",
    "Belgium",
    "Croatia",
]
TOWNS = [
    "Watford",
    "Hitchin",
    "Stevenage",
    "Harpenden",
    "Letchworth",
    "Baldock",
    "Tring",
    "Royston",
    "Bushey",
    "Hertford",
    "Ware",
    "Welwyn",
    "Hatfield",
    "Berkhamsted",
    "Radlett",
    "Borehamwood",
    "Cheshunt",
    "Hoddesdon",
    "Sawbridgeworth",
]
WORDS = [
    "Blue",
    "Silent",
    "River",
    "Night",
    "Summer",
    "Broken",
    "Golden",
    "Last",
    "Hidden",
    "Paper",
    "Glass",
    "Wild",
    "Distant",
    "Crimson",
    "Quiet",
    "Northern",
    "Falling",
    "Iron",
    "Secret",
    "Little",
    "Electric",
    "Velvet",
    "Lost",
    "Burning",
    "Empty",
    "Frozen",
    "Hollow",
    "Bright",
    "Shadow",
    "Winter",
    "Ocean",
    "Garden",
    "City",
    "Moon",
    "Road",
    "Dream",
    "Letter",
    "Storm",
    "Horizon",
    "Mirror",
    "Lantern",
    "Harbor",
    "Echo",
    "Orchard",
    "Signal",
    "Tide",
    "Promise",
    "Valley",
]
STATES = ["Ohio", "Texas", "Georgia", "Illinois", "Kansas", "Oregon", "Virginia", "Maine", "Nevada", "Iowa"]
REGIONS = ["Nordland", "Troms", "Vestland", "Innlandet", "Viken", "Agder", "Rogaland", "Trøndelag", "Finnmark"]


def person(rng: random.Random) -> str:
    return f"{rng.choice(FIRST)} {rng.choice(LAST)}"


def title(rng: random.Random) -> str:
    words = rng.sample(WORDS, rng.choice((2, 2, 3)))
    return rng.choice(("", "", "", "The ")) + " ".join(words)


def choice(*values: str) -> Maker:
    return lambda rng: rng.choice(values)


def integer(low: int, high: int) -> Maker:
    return lambda rng: str(rng.randint(low, high))


def decimal(low: float, high: float, places: int = 1) -> Maker:
    return lambda rng: f"{rng.uniform(low, high):.{places}f}"


def thousands(low: int, high: int) -> Maker:
    return lambda rng: f"{rng.randint(low, high):,}"


def percent(low: float, high: float) -> Maker:
    return lambda rng: f"{rng.uniform(low, high):.1f}%"


def race_time(rng: random.Random) -> str:
    return rng.choice(
        (
            f"{rng.randint(1, 2)}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}.{rng.randint(0, 9)}",
            f"+{rng.randint(1, 59)}.{rng.randint(0, 999):03d}",
            f"+{rng.randint(1, 3)} Lap{'s' if rng.random() < 0.5 else ''}",
            rng.choice(("Accident", "Engine", "Gearbox", "Spun off", "Collision")),
        )
    )


def date(rng: random.Random) -> str:
    month = rng.choice(
        [
            "January",
            "February",
            "March",
            "April",
            "May",
            "June",
            "July",
            "August",
            "September",
            "October",
            "November",
            "December",
        ]
    )
    return f"{month} {rng.randint(1, 28)}, {rng.randint(1995, 2020)}"


def code(prefix: str) -> Maker:
    return lambda rng: f"{prefix}-{rng.randint(100, 9999)}"


@dataclass(frozen=True)
class ColumnSpec:
    name: str
    role: str  # key, cat, num, text
    make: Maker


@dataclass(frozen=True)
class Domain:
    name: str
    entity: str  # singular noun for a row ("athlete")
    entities: str  # plural noun
    table_names: tuple[str, ...]
    columns: tuple[ColumnSpec, ...]  # the first column is the key


DOMAINS: tuple[Domain, ...] = (
    Domain(
        "martial_arts",
        "athlete",
        "athletes",
        (
            "Jiu-Jitsu Championships Results",
            "2011 World Judo Championships – Women's (medal table)",
            "Results of the Pan American Games, Judo",
            "Table of Athlete, Nation, and Result",
        ),
        (
            ColumnSpec("Athlete", "key", person),
            ColumnSpec("Nation", "cat", lambda rng: rng.choice(COUNTRIES[:8])),
            ColumnSpec("Rank", "num", integer(1, 60)),
            ColumnSpec("Points", "num", integer(0, 120)),
            ColumnSpec("Method", "cat", choice("Decision", "Submission", "Points", "Ippon", "Disqualification")),
            ColumnSpec(
                "Notes",
                "cat",
                choice("Women +60kg Bronze", "Men -73kg Gold", "Open class Silver", "Women's open Bronze"),
            ),
            ColumnSpec("Opponent", "text", person),
            ColumnSpec("Time", "text", lambda rng: f"{rng.randint(0, 9)}:{rng.randint(0, 59):02d}"),
            ColumnSpec("Round", "cat", choice("1", "2", "3", "Final")),
        ),
    ),
    Domain(
        "films",
        "film",
        "films",
        (
            "Table of Year, Title, and Role",
            "Filmography (feature films)",
            "List of film roles, 1998–2019",
            "Film & television credits",
        ),
        (
            ColumnSpec("Title", "key", title),
            ColumnSpec("Year", "num", integer(1985, 2022)),
            ColumnSpec("Role", "text", person),
            ColumnSpec(
                "Director", "cat", lambda rng: rng.choice(("Lena Moreau", "Hiro Sato", "Diego Alvarez", "Freya Olsen"))
            ),
            ColumnSpec("Notes", "cat", choice("Lead role", "Cameo", "Voice", "Supporting role", "Uncredited")),
            ColumnSpec("Box office ($M)", "num", decimal(0.5, 350.0, 1)),
            ColumnSpec("Rating", "num", decimal(3.0, 9.5, 1)),
            ColumnSpec("Language", "cat", choice("English", "Japanese", "French", "Spanish")),
            ColumnSpec("Runtime (min)", "num", integer(78, 181)),
        ),
    ),
    Domain(
        "schools",
        "school",
        "schools",
        (
            "List of schools in Hertfordshire (secondary, state)",
            "Secondary schools of the district, 2012–13",
            "Schools, ages and Ofsted ratings",
        ),
        (
            ColumnSpec(
                "School",
                "key",
                lambda rng: f"{rng.choice(TOWNS)} {rng.choice(('Academy', 'High School', 'Grammar School', 'School'))}",
            ),
            ColumnSpec("Locality", "cat", lambda rng: rng.choice(TOWNS[:6])),
            ColumnSpec("Ages", "cat", choice("11–18", "11–16", "13–18")),
            ColumnSpec("Pupils", "num", integer(180, 2100)),
            ColumnSpec("Ofsted rating", "cat", choice("Outstanding", "Good", "Requires improvement", "Inadequate")),
            ColumnSpec(
                "Website",
                "text",
                lambda rng: f"http://www.{rng.choice(WORDS).lower()}{rng.randint(1, 99)}.herts.sch.uk/",
            ),
            ColumnSpec("Type", "cat", choice("Academy", "Community", "Voluntary aided", "Foundation")),
            ColumnSpec("Founded", "num", integer(1870, 2012)),
            ColumnSpec("Pupil/teacher ratio", "num", decimal(11.0, 22.0, 1)),
        ),
    ),
    Domain(
        "grand_prix",
        "driver",
        "drivers",
        (
            "1952 British Grand Prix - Race",
            "2009 Monaco Grand Prix – Classification",
            "Race results (Round 7, Hungaroring)",
        ),
        (
            ColumnSpec("Driver", "key", person),
            ColumnSpec("No.", "num", integer(1, 99)),
            ColumnSpec("Constructor", "cat", choice("Ferrari", "Maserati", "Aprilia", "Lotus", "Brabham", "Cooper")),
            ColumnSpec("Laps", "num", integer(3, 78)),
            ColumnSpec("Time/Retired", "text", race_time),
            ColumnSpec("Grid", "num", integer(1, 30)),
            ColumnSpec("Pts.", "num", integer(0, 25)),
            ColumnSpec("Nationality", "cat", lambda rng: rng.choice(COUNTRIES[:6])),
        ),
    ),
    Domain(
        "elections",
        "district",
        "districts",
        (
            "United States House of Representatives elections, 1950 (Ohio)",
            "Election results by district (1966)",
            "House races – incumbents and results",
        ),
        (
            ColumnSpec("District", "key", lambda rng: f"{rng.choice(STATES)} {rng.randint(1, 30)}"),
            ColumnSpec("Incumbent", "text", person),
            ColumnSpec("Party", "cat", choice("Democratic", "Republican")),
            ColumnSpec("First elected", "num", integer(1920, 1964)),
            ColumnSpec("Result", "cat", choice("Re-elected", "Retired", "Lost re-election", "Died in office")),
            ColumnSpec("Votes", "num", integer(20000, 180000)),
            ColumnSpec("Vote %", "text", percent(35.0, 80.0)),
        ),
    ),
    Domain(
        "climate",
        "station",
        "stations",
        (
            "Climate data for weather stations (Norway)",
            "Weather stations: elevation, temperature & precipitation",
        ),
        (
            ColumnSpec(
                "Station", "key", lambda rng: f"{rng.choice(WORDS)}{rng.choice(('vik', 'dal', 'fjord', 'berg', 'nes'))}"
            ),
            ColumnSpec("Region", "cat", lambda rng: rng.choice(REGIONS[:5])),
            ColumnSpec("Elevation (m)", "num", integer(2, 1400)),
            ColumnSpec("Avg. temp. (°C)", "num", decimal(-6.0, 9.0, 1)),
            ColumnSpec("Precipitation (mm)", "num", integer(300, 3200)),
            ColumnSpec("Sunshine hours", "num", integer(900, 1900)),
            ColumnSpec("Established", "num", integer(1860, 2005)),
        ),
    ),
    Domain(
        "albums",
        "album",
        "albums",
        (
            "Discography – studio albums",
            "Albums, singles & EPs (1998–2010)",
            "Studio albums, with selected chart positions",
        ),
        (
            ColumnSpec("Album", "key", title),
            ColumnSpec("Year", "num", integer(1990, 2021)),
            ColumnSpec("Label", "cat", choice("Atlantic", "Sub Pop", "Domino", "Warp", "Columbia")),
            ColumnSpec("Peak chart position (US)", "num", integer(1, 200)),
            ColumnSpec("Certifications", "cat", choice("Gold", "Platinum", "None", "2× Platinum")),
            ColumnSpec("Sales", "text", thousands(5000, 3_000_000)),
            ColumnSpec("Format", "cat", choice("CD, LP", "CD", "Digital download", "LP, cassette")),
            ColumnSpec("Tracks", "num", integer(7, 19)),
        ),
    ),
    Domain(
        "products",
        "product",
        "products",
        (
            "Products of the company (2019 catalogue)",
            "Inventory #3 – Warehouse B",
            "Price list / stock levels",
        ),
        (
            ColumnSpec("Product #", "key", code("PX")),
            ColumnSpec(
                "Product name",
                "text",
                lambda rng: f"{rng.choice(WORDS)} {rng.choice(('Lamp', 'Chair', 'Kettle', 'Desk', 'Bottle', 'Clock'))}",
            ),
            ColumnSpec("Category", "cat", choice("Furniture", "Kitchen", "Lighting", "Outdoor")),
            ColumnSpec("Price ($)", "num", decimal(3.0, 480.0, 2)),
            ColumnSpec("Units sold", "num", integer(0, 5000)),
            ColumnSpec("In stock?", "cat", choice("Yes", "No")),
            ColumnSpec("Discount %", "text", choice("0%", "5%", "10%", "15%", "25%")),
            ColumnSpec("Supplier", "cat", choice("Nordic Home", "Acme Ltd.", "Casa Verde", "Tanaka & Sons")),
            ColumnSpec("Weight (kg)", "num", decimal(0.2, 40.0, 2)),
            ColumnSpec("Remarks\\n", "text", choice("fragile", "bulk item", "seasonal", "new")),
        ),
    ),
    Domain(
        "episodes",
        "episode",
        "episodes",
        (
            "List of episodes (Season 3)",
            "Episodes of the series, season 2 (2014)",
        ),
        (
            ColumnSpec("Title", "key", lambda rng: f"\u201c{title(rng)}\u201d"),
            ColumnSpec("No. in series", "num", integer(1, 120)),
            ColumnSpec("Directed by", "cat", lambda rng: rng.choice(("Ines Ferreira", "Bram Jensen", "Kofi Okafor"))),
            ColumnSpec(
                "Written by", "cat", lambda rng: rng.choice(("Sofia Rossi", "Omar Haddad", "Vera Laine", "Nora Kim"))
            ),
            ColumnSpec("Original air date", "text", date),
            ColumnSpec("U.S. viewers (millions)", "num", decimal(0.8, 14.0, 2)),
            ColumnSpec("Production code", "text", code("3X")),
        ),
    ),
)
