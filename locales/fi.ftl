# signupd suomeksi: jokainen sana, jonka kävijä lukee sivuilta ja kahdesta sähköpostista.
# Viestien tunnisteet ja muuttujat ($list, $site, ...) ovat samat kuin en.ftl:ssä.
#
# Puhuttelu: sinuttelu, kuten suomalaisilla verkkosivuilla; lyhyet lauseet.
# $list on listan nimi, ja se pidetään perusmuodossa (esim. "Tilaus: { $list }", "listan { $list }").
# Sanasto:
#   sign up / signup        - tilata / tilaus
#   confirm                 - vahvistaa / vahvistus
#   list                    - lista
#   remove (my address)     - poistaa (osoitteeni)
#   preferences             - asetukset / asetussivu
#   email address           - sähköpostiosoite (lyhyesti: osoite)
#   link                    - linkki
#   subscription            - tilaus
#   unsubscribe             - perua tilaus
#   mail                    - sähköposti / viesti
#   one-way hash            - yksisuuntainen tiiviste

## Mail dates

# Kuukaudet partitiivissa päivän numeron jälkeen: "7. joulukuuta 2026".
date-format = { $day }. { $month } { $year } klo { $time } UTC
date-month-1 = tammikuuta
date-month-2 = helmikuuta
date-month-3 = maaliskuuta
date-month-4 = huhtikuuta
date-month-5 = toukokuuta
date-month-6 = kesäkuuta
date-month-7 = heinäkuuta
date-month-8 = elokuuta
date-month-9 = syyskuuta
date-month-10 = lokakuuta
date-month-11 = marraskuuta
date-month-12 = joulukuuta

## Durations

# Perusmuoto; lauseet on rakennettu niin, että kesto sopii niihin sellaisenaan
# ("enintään 10 minuuttia", "1 tunti viimeisen viestin jälkeen", "kunnes on kulunut 30 päivää").
duration-second =
    { $n ->
        [one] { $n } sekunti
       *[other] { $n } sekuntia
    }
duration-minute =
    { $n ->
        [one] { $n } minuutti
       *[other] { $n } minuuttia
    }
duration-hour =
    { $n ->
        [one] { $n } tunti
       *[other] { $n } tuntia
    }
duration-day =
    { $n ->
        [one] { $n } päivä
       *[other] { $n } päivää
    }
duration-and = { $init } ja { $last }
duration-separator = {", "}
duration-per = { $n } per { $duration }

## page

page-back-to = Takaisin sivustolle { $site }
page-privacy = Mitä tallennamme ja kuinka pitkäksi aikaa
page-languages = Muilla kielillä:

## errors

errors-unavailable-title = Yritä uudelleen
errors-unavailable = Tämä ei onnistunut juuri nyt. Yritä uudelleen minuutin kuluttua.
errors-not-found-title = Sivua ei löytynyt
errors-not-found = Täällä ei ole tilauslomaketta.
errors-not-found-link = Siirry tilauslomakkeeseen
errors-incomplete-title = Linkki on vaillinainen
errors-incomplete = Linkki näyttää katkenneen tai muuttuneen. Avaa se uudelleen sähköpostista tai kopioi koko osoite selaimeesi.
errors-refused-title = Tämä ei onnistunut
errors-refused = Pyyntöä ei voitu lukea. Palaa sivulle ja yritä uudelleen.
errors-timeout = Pyyntö ei saapunut ajoissa. Yritä uudelleen.
errors-internal = Meillä tapahtui virhe. Yritä uudelleen minuutin kuluttua.

## signup

signup-title = Tilaus: { $list }
signup-heading = Tilaa { $list }
signup-intro = Anna sähköpostiosoitteesi. Lähetämme sinulle linkin; tilaus astuu voimaan vasta, kun avaat linkin ja vahvistat tilauksen.
signup-email-label = Sähköpostiosoite
signup-honeypot-label = Jätä tämä kenttä tyhjäksi
signup-submit = Tilaa
signup-choose-title = Tilaus
signup-choose = Valitse lista:
signup-several-title = Tilaus
signup-several-heading = Tilaus
signup-lists-legend = Mitkä listat haluat tilata?
signup-several-consent = Haluan saada valitsemani listat sähköpostitse. Voin perua minkä tahansa tilauksen milloin vain.
signup-no-list-ticked = Valitse vähintään yksi lista.
signup-optional = valinnainen
signup-choose-option = Valitse
signup-field-missing = Täytä kenttä ”{ $field }”.
signup-field-invalid = Tarkista kenttä ”{ $field }”: valitse jokin vaihtoehdoista tai kirjoita lyhyemmin ja yhdelle riville.
signup-unreadable = Lomaketta ei voitu lukea. Yritä uudelleen.
signup-unsupported = Lomake lähetettiin muodossa, jota tämä palvelu ei ymmärrä.
signup-too-large = Lomake oli liian suuri. Anna pelkkä sähköpostiosoitteesi.
signup-origin-not-allowed = Tätä lomaketta ei voi käyttää sivustolta, jolta se lähetettiin.
signup-invalid-email = Anna kelvollinen sähköpostiosoite, esimerkiksi nimi@example.com.
signup-consent-required = Hyväksy näiden sähköpostien vastaanottaminen rastittamalla ruutu.
signup-unknown-list = Tämä lomake viittaa listaan, jota ei ole olemassa.
signup-invalid-source = Tämä lomake lähettää lähteen, jota tämä palvelu ei hyväksy. Kerro asiasta sivuston ylläpitäjälle.
signup-unknown-tag = Tämä lomake lähettää tunnisteen, jota lista ei tunne. Kerro asiasta sivuston ylläpitäjälle.
signup-domain-not-allowed = Tämän verkkotunnuksen osoitteilla ei voi tilata täällä. Käytä toista sähköpostiosoitetta.
signup-rate-limited = Verkostasi on tullut liian monta tilausta. Yritä myöhemmin uudelleen.
signup-storage-unavailable = Tilaustasi ei voitu tallentaa juuri nyt. Yritä uudelleen minuutin kuluttua.

## check inbox

check-inbox-title = Tarkista sähköpostisi
check-inbox-sent = Jos osoite voi vastaanottaa sähköpostia, viesti on matkalla. Avaa viestissä oleva linkki ja vahvista painamalla painiketta.
check-inbox-sent-for = Jos osoite voi vastaanottaa sähköpostia, viesti listasta { $list } on matkalla. Avaa viestissä oleva linkki ja vahvista painamalla painiketta.
check-inbox-nothing-arrived = Eikö mitään ole tullut muutamassa minuutissa? Katso roskapostikansiosta. Linkki toimii vain rajoitetun ajan; voit yksinkertaisesti tilata uudelleen.
check-inbox-open-inbox = Avaa { $provider }

## surge

surge-title = Vielä yksi vaihe
surge-unusual = Sivustolla on juuri nyt tavallista enemmän liikennettä, joten se lähettää vahvistusviestejä vain niitä pyytäville.
surge-ask = Paina painiketta, niin vahvistusviesti lähtee matkaan.
surge-button = Lähetä vahvistusviesti
surge-not-you = Etkö tilannut mitään? Sulje tämä sivu, niin mitään ei lähetetä.

## confirm

confirm-title = Vahvista tilaus: { $list }
confirm-heading = Vahvista tilaus
confirm-intro = Pyysit saada listan { $list } sähköpostiisi. Vahvista painamalla painiketta; mitään ei lähetetä ennen sitä.
confirm-email-label = Sähköpostiosoitteesi
confirm-email-hint = Kirjoita osoite, johon tämä viesti lähetettiin. Näin linkkejä automaattisesti tarkistavat ohjelmat eivät voi vahvistaa tilausta puolestasi.
confirm-button = Vahvista tilaus
confirm-not-you = Etkö pyytänyt tätä? Sulje vain tämä sivu; ilman vahvistusta et saa enempää viestejä.
confirm-wrong-address = Linkkiä ei lähetetty tähän osoitteeseen. Kirjoita osoite uudelleen.
confirm-already-title = Jo vahvistettu
confirm-already = Tällä osoitteella on jo tilaus listalle { $list }. Sinun ei tarvitse tehdä muuta.
confirm-done-title = Tilaus on vahvistettu
confirm-done = Kiitos! Tilauksesi listalle { $list } on nyt voimassa.
confirm-done-any = Kiitos! Tilauksesi on nyt voimassa.
confirm-expired-title = Linkki on vanhentunut
confirm-expired = Vahvistuslinkki ei ole enää voimassa: se on vanhentunut, korvattu uudemmalla viestillä tai jo käytetty. Voit tilata uudelleen.
confirm-sign-up-again = Tilaa uudelleen

## manage

manage-title = Poista osoitteeni
manage-intro = Tämä poistaa osoitteesi listalta { $list }. Et saa siltä enää viestejä.
manage-intro-any = Tämä poistaa osoitteesi listalta, jota varten tämä linkki lähetettiin. Et saa siltä enää viestejä.
manage-button = Poista osoitteeni
manage-removed-title = Osoite poistettu
manage-removed = Osoitteesi on poistettu listalta { $list }. Et saa siltä enää viestejä.
manage-removed-any = Osoitteesi on poistettu. Et saa tältä listalta enää viestejä.

## preferences

preferences-title = Sähköpostiasetuksesi
preferences-intro = Valitse sivuston { $site } listat, jotka haluat saada, poista valinta niistä, joita et enää halua, ja tallenna.
preferences-legend = Listat
preferences-pending = Odottaa vahvistustasi.
preferences-kept = Mitä kerroit tilatessasi:
preferences-save = Tallenna
preferences-remove-all-heading = Poista osoitteeni
preferences-remove-all-intro = Voit myös poistaa osoitteesi kaikilta näiltä listoilta kerralla. Et silloin saa niiltä enää viestejä.
preferences-remove-all = Poista minut kaikilta
preferences-saved-title = Asetukset tallennettu
preferences-saved = Valintasi sivustolle { $site } on tallennettu. Saat viestejä vain valitsemiltasi listoilta.
preferences-saved-any = Valintasi on tallennettu. Saat viestejä vain valitsemiltasi listoilta.
preferences-unreadable-title = Lomaketta ei voitu lukea
preferences-unreadable = Mitään ei muutettu. Avaa sähköpostissa oleva linkki uudelleen ja tallenna vielä kerran.

## privacy

privacy-title = Tietosuoja: { $list }
privacy-heading = Mitä osoitteellesi tapahtuu
privacy-intro = Tällä sivulla kerrotaan, mitä tallennetaan, kun tilaat listan { $list }, ja kuinka pitkäksi aikaa.
privacy-stored-heading = Mitä tallennetaan
privacy-stored = Sähköpostiosoitteesi, lista, hyväksymäsi suostumustekstin versio ({ $version }) ja itse teksti, milloin tilasit sekä milloin ja miten vahvistit tilauksen (myös kuinka kauan viestin jälkeen). Jos lomake ne ilmoittaa, myös paikka, josta tilasit (esimerkiksi ”homepage-footer”), ja lomakkeessa mainitut aiheet.
privacy-fields = Lomake kysyy myös: { $fields }. Mitä kirjoitat niihin, tallennetaan tilauksesi yhteyteen yhtä pitkäksi aikaa kuin muukin ja näytetään asetussivullasi.
privacy-no-ip = IP-osoitettasi ei tallenneta. Väärinkäytösten rajoittamiseksi signupd laskee tilaukset verkkokohtaisesti, ja laskurin tunnisteena on verkon yksisuuntainen tiiviste, ei koskaan itse osoite: { $limits }. Laskuri kattaa enintään { $duration }, ja se poistetaan sen jälkeen seuraavassa siivouksessa.
privacy-mail-heading = Viestit
privacy-mail = Saat yhden viestin, jossa on vahvistuslinkki, ja jos tilaat uudelleen, uuden viestin aikaisintaan { $duration } edellisen jälkeen. Muuta ei lähetetä ennen kuin vahvistat.
privacy-unconfirmed = Jos et vahvista tilausta, linkki lakkaa toimimasta { $duration } viimeisen viestin jälkeen, ja osoitteesi poistetaan sen jälkeen seuraavassa siivouksessa.
privacy-neighbourhood = Lisäksi saman naapuruston kaikki verkot (yhden palveluntarjoajan osoitelohko) lasketaan yhteen: { $limits }.
privacy-never-mailed = Jos vahvistusviestiä ei ole vielä voitu lähettää (kun moni tilaa samaan aikaan), osoitteesi poistetaan { $duration } tilauksen jälkeen, lähti viesti tai ei.
privacy-cap =
    Jotta kukaan ei voisi tukkia postilaatikkoasi syöttämällä osoitteesi moniin lomakkeisiin, samaan osoitteeseen lähetetään minkä tahansa 24 tunnin aikana enintään { $n ->
        [one] { $n } vahvistusviesti
       *[other] { $n } vahvistusviestiä
    } kaikkien tämän palvelun listojen kesken. Tätä varten osoitteesi yksisuuntainen tiiviste säilytetään päivän ajan jokaisen tällaisen viestin kellonajan kanssa.
privacy-reputation = Kun vahvistat, verkkosi (yhden palveluntarjoajan osoitelohkon) yksisuuntainen tiiviste säilytetään päivämäärän kanssa, kunnes on kulunut { $duration }: kun moni tilaa samaan aikaan, viestit verkkoihin, joista tilauksia vahvistetaan, lähtevät ensin. Muuta vahvistuksesta ei säilytetä sen yhteydessä.
privacy-removal-heading = Osoitteen poistaminen
privacy-removal = Jokaisessa viestissä on linkki osoitteesi poistamiseen. Kun käytät sitä, osoitteesi poistetaan. Siitä säilytetään vain yksisuuntainen tiiviste, jotta siihen ei enää koskaan lähetetä viestejä ilman uutta vahvistusta – tai ei koskaan, jos ilmoitit, ettei tilaus ollut sinun.
privacy-shared = Kun vahvistat tilauksen tai poistat osoitteesi, palvelun ylläpitäjän omille järjestelmille ilmoitetaan siitä, osoitteesi ja hyväksymäsi asiat mukana.
privacy-contact = Kysyttävää? Kirjoita osoitteeseen { $address }.

## mail

mail-greeting = Hei,
mail-asked = Joku – toivottavasti sinä – pyysi saada listan { $list } tähän osoitteeseen.
mail-how = Vahvista avaamalla tämä linkki ja painamalla painiketta ”{ $button }”:
mail-confirm-link = Vahvista tilaukseni
mail-copy = Tai kopioi tämä osoite selaimeesi:
mail-until = Linkki toimii { $date } asti. Ennen kuin vahvistat, muuta ei lähetetä.
mail-not-you = Etkö pyytänyt tätä? Voit jättää tämän viestin huomiotta tai poistaa tämän osoitteen lopullisesti:
mail-remove-for-good = Poista tämä osoite
mail-welcome = Tilauksesi listalle { $list } on nyt voimassa. Kiitos vahvistuksesta.
mail-preferences-any-time = Asetussivullasi voit milloin tahansa valita, mitä saat meiltä, tai perua tilauksen:
mail-preferences-link = Avaa asetussivuni
mail-automated = Tämä on automaattinen viesti.
mail-privacy = Mitä tallennamme ja kuinka pitkäksi aikaa:
mail-confirm-subject = Vahvista tilauksesi
mail-welcome-subject = Tilauksesi on vahvistettu

## language

language-name = Suomi
