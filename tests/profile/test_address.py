"""mnemo.profile.address: a street address is never the profile's city, however
the city is written (issue 55 point 4: Qwen2.5-Coder-1.5B stored "西湖区文三路 88 号"
as the city, and the town of an English delivery address)."""

from __future__ import annotations

import pytest

from mnemo import aget_profile, aupdate_profile
from mnemo.core import InvalidInputError
from mnemo.profile import normalize_field
from mnemo.profile.address import is_no_town, is_street_address, said_in_address

ADDRESSES = [
    "14 Harbour Lane, Brighton",
    "Harbour Lane",
    "221B Baker Street",
    "Rue de Rivoli",
    "Hauptstraße 5",
    "10115 Berlin",
    "BN1 1AA",
    "西湖区文三路 88 号",
    "文三路",
    "朝阳区建国路",
    "東京都港区六本木6丁目",
    "세종대로 1",
    "6楼",  # a floor (the eighth blind set: "另外我住6楼没电梯" gave the city "6楼")
    "3单元",
    "4th floor",
    "丰巢快递柜",  # a place a parcel is left (the tenth blind set)
    "the parcel locker",
]
CITIES = ["Brighton", "Port St. Lucie", "São Paulo", "New York", "Lane Cove", "西湖区", "杭州市", "서울", "City 3"]
CITIES += ["石家庄", "张家界", "驻马店", "Homestead", "Workington"]  # 家 and 店 inside a name, "home" inside a word


@pytest.mark.parametrize("value", ADDRESSES)
def test_a_street_address_is_never_a_city(value):
    assert is_street_address(value)
    with pytest.raises(InvalidInputError, match="not a street address"):
        normalize_field("city", value)


@pytest.mark.parametrize("value", CITIES)
def test_a_city_s_name_is_one(value):
    assert not is_street_address(value) and not is_no_town(value)
    assert normalize_field("city", value) == value


@pytest.mark.parametrize("value", ["我家", "家里", "老家", "健身房", "西安项目部", "home", "the gym", "my place"])
def test_home_here_or_a_venue_is_no_city(value):
    """The thirteenth blind set's model wrote "我家", "家里" and "健身房" as the city."""
    assert is_no_town(value)
    with pytest.raises(InvalidInputError, match="not home, here or a place in a town"):
        normalize_field("city", value)


async def test_the_profile_api_refuses_an_address_as_the_city_and_keeps_the_city(store, user):
    await aupdate_profile(store, user, {"city": "Brighton"})
    with pytest.raises(InvalidInputError, match="an address is a note"):
        await aupdate_profile(store, user, {"city": "14 Harbour Lane, Brighton", "name": "Ann"})
    profile = await aget_profile(store, user)
    assert profile["city"]["value"] == "Brighton" and "name" not in profile  # all or nothing, nothing lost


def test_a_town_said_only_inside_a_street_address_is_not_where_the_user_lives():
    english = ["Until the end of June please send my orders to 14 Harbour Lane, Brighton, I'm staying there."]
    chinese = ["七月底之前，我的快递都寄到西湖区文三路 88 号吧，我暂时住朋友家。"]
    assert said_in_address("Brighton", english)
    assert said_in_address("西湖区", chinese)
    assert said_in_address("Berlin", ["Send it to Hauptstraße 5, 10115 Berlin please."])
    # A flat, unit or floor between the street and the town (issue 55, the blind set's "Apt 3B").
    assert said_in_address("Norwich", ["Ship to 9 Elm Road, Flat 4, Norwich until May."])
    assert said_in_address("Denver", ["my office is 300 Pine Street, Suite 1200, Denver"])
    assert said_in_address("Leeds", ["send it to 14 Kirk Lane #7 Leeds"])
    assert said_in_address("Leeds", ["send it to 14 Kirk Lane, 3rd Floor, Leeds"])
    # Said elsewhere as a place, or not after a street: where the user may live.
    assert not said_in_address("Brighton", ["I live in Brighton.", *english])
    assert not said_in_address("杭州", ["我住在杭州，快递寄到文三路 88 号。"])
    assert not said_in_address("Brighton", ["I moved in 2019, Brighton is home now."])
    assert not said_in_address("Leeds", english)  # never said: no address of it either


def test_a_phrase_with_a_number_and_way_is_no_street():
    """ "thats my size, 11 is always way too tight" held "11 is always way" (the tenth blind set)."""
    from mnemo.profile import house_address

    assert house_address("send it to 14 Harbour Lane, Brighton") == "Harbour Lane"  # precondition
    assert house_address("thats my size, 11 is always way too tight.") is None
